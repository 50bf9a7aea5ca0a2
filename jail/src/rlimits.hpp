// Parent side: the rlimits the tool gets, from the Spec's Limits.
#pragma once

#include <vector>

#include "child/plan.hpp"
#include "jail/limits.hpp"

namespace jail {

// Core dumps off unless asked for; the flags' limits; then --rlimit entries, which win.
[[nodiscard]] std::vector<child::RlimitSetting> rlimits_for(const Limits& limits);

}  // namespace jail
