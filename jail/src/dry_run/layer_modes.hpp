// A tool may leave an entry in its layer that the layer's owner cannot read or search (a
// directory of mode 000): the review and the commit, which read the layer with the caller's
// rights, would fail on it, and every commit then said the run was cut short. At the end of the
// run such entries are opened for their owner, and the modes the tool set are kept beside the
// layer (layers/<n>/modes.json), which is what changes() reports and a commit sets.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <string>

#include "jail/dry_run.hpp"

namespace jail::dry_run {

// Gives every directory of the layer u+rwx and every file u+r, keeping the modes it changed.
// Throws jail::Error.
void open_layer_for_review(const Session& session, std::size_t layer);

// The modes kept for the layer, by path below it (empty when none were changed).
[[nodiscard]] std::map<std::string, mode_t> kept_modes(const Session& session, std::size_t layer);

}  // namespace jail::dry_run
