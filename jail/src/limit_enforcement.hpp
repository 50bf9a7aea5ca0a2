// Parent side: how each limit a run asked for was held, for the status JSON (Result::
// limits_enforced): by the jail's cgroup, over the whole jail; by an rlimit, per process of the
// tool; or by the supervisor. A reader of one run's record then knows what "--memory 512M"
// meant there (the Landlock mode and runsc hold some limits differently from the full jail).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "jail/limits.hpp"

namespace jail {

// `cgroup_version`: 1 or 2, the jail's cgroup; 0 when it had none (then no cgroup limit was
// asked for: launch refuses such a run).
[[nodiscard]] std::vector<std::pair<std::string, std::string>> limit_enforcement(
    const Limits& limits, int cgroup_version);

}  // namespace jail
