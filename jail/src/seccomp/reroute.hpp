// Parent side: what the filter rewrites share (lookup_policy, exit_watch, write_watch). Each
// sends some calls the policy allows to the supervisor instead of deciding them in the kernel:
// it replaces the rules that allow those calls, and adds rules for the calls an allowing default
// would take. What the policy decides is unchanged; the supervisor evaluates the caller's own.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "policy/policy.hpp"

namespace jail {

// (arg & mask) OP value.
[[nodiscard]] policy::Condition arg_compare(int arg, std::uint64_t mask, policy::CmpOp op,
                                            std::uint64_t value);

// A rule's own condition (if any) and `extra`, both.
[[nodiscard]] policy::Condition both(const std::optional<policy::Condition>& own,
                                     policy::Condition extra);

// A refusal answered in the kernel, first, whatever the policy allows: `nr` fails with `err`
// when `condition` holds (always when unset). Quiet, because the supervisor evaluates the
// caller's own policy, which would let a refusal sent to it run.
[[nodiscard]] policy::Rule kernel_refusal(int nr, int err,
                                          std::optional<policy::Condition> condition,
                                          std::string why);

// `allowed` made `log`: sent to the supervisor, which lets it run as the policy says.
[[nodiscard]] policy::Rule to_supervisor(policy::Rule allowed);

// Appends to `rules` what takes the place of `allowed`, a rule that allows one of the calls.
using Reroute = std::function<void(std::vector<policy::Rule>& rules, const policy::Rule& allowed)>;

// `policy` with every rule that allows a call of `numbers` replaced by what `reroute` appends,
// and, when the default allows, what it appends for a rule of each number that carries the
// default (rules come first and the first match decides, so these catch exactly the calls that
// would have fallen through to it).
[[nodiscard]] policy::Policy reroute_allowed(const policy::Policy& policy,
                                             std::span<const int> numbers, const Reroute& reroute);

}  // namespace jail
