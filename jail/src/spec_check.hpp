// Parent side: everything about a Spec that can be checked before cloning is checked here, so the
// user hears about a bad flag as a sentence, not as a child's errno.
#pragma once

#include "jail/spec.hpp"

namespace jail {

// Throws jail::Error (step "spec") with every problem found in one message.
void check_spec(const Spec& spec);

// "/a//b/./c/" -> "/a/b/c"; empty if the path is not absolute or has a ".." component.
[[nodiscard]] std::string normalize_jail_path(const std::string& path);

}  // namespace jail
