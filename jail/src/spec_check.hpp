// Parent side: everything about a Spec that can be checked before cloning is checked here, so the
// user hears about a bad flag as a sentence, not as a child's errno.
#pragma once

#include "jail/spec.hpp"

namespace jail {

// Throws jail::Error (step "spec") with every problem found in one message.
void check_spec(const Spec& spec);

// "/a//b/./c/" -> "/a/b/c"; empty if the path is not absolute or has a ".." component.
[[nodiscard]] std::string normalize_jail_path(const std::string& path);

// Whether the Spec asks for uid 0 or gid 0 for the tool: the host's root wherever the jail has
// no user namespace of jail's to map it (runsc, an exported bundle).
[[nodiscard]] bool asks_for_root_ids(const Spec& spec);

// Whether the normalized jail path `path` is `dir` or below it ("/" holds every path).
[[nodiscard]] bool jail_path_within(const std::string& path, const std::string& dir);

}  // namespace jail
