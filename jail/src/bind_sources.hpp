// Parent side, before clone, for a root caller: every bind's source (and a --rootfs) is opened
// here as a detached copy of its tree, sealed with its attributes (nosuid, nodev, read-only), and
// inherited by the child, which only attaches it. So the paths are resolved with the caller's
// own rights, and the child needs none on host paths. An unprivileged caller's child opens them
// itself (child/filesystem.cpp): the parent could not copy a tree, and the rights are the same.
#pragma once

#include <vector>

#include "child/plan.hpp"
#include "process_state.hpp"
#include "unique_fd.hpp"

namespace jail {

// For a root caller, fills each bind op's source_fd (and plan.rootfs_fd), sets
// plan.sources_opened and returns the descriptors, to be closed once the child has its copy;
// otherwise returns none. Throws jail::Error with the sentence a child's report of the same
// failure would have (setup_failure.hpp): a link in a caller's bind source is ELOOP there.
// A dry run's layers are made here too where the kernel allows (layer_overlay.hpp); a capped
// one's store then comes back in `layer_store`, for the Recorder.
[[nodiscard]] std::vector<UniqueFd> open_bind_sources(child::Plan& plan,
                                                      const FailureContext& context,
                                                      UniqueFd& layer_store);

}  // namespace jail
