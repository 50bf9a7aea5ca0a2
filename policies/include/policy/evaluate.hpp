// The IR evaluator: what the compiled filter decides for one syscall, and which line decided.
// The supervisor answers seccomp user notifications with it, so it must agree exactly with
// compile() — the tests run both against the same inputs.
#pragma once

#include <linux/seccomp.h>

#include "policy/policy.hpp"

namespace jail::policy {

struct Decision {
  Action action;
  SourceLocation where;  // the deciding rule, or the `default` line
  bool by_default = false;
  bool by_baseline = false;  // a rule of the shipped baseline decided
};

// Whether a condition holds for these argument values (unsigned 64-bit comparisons after the
// mask, as the compiled filter does them).
[[nodiscard]] bool holds(const Condition& condition, const std::uint64_t (&args)[6]);

[[nodiscard]] Decision evaluate(const Policy& policy, const struct seccomp_data& data);

// What one syscall's `rules` (in order) decide for these arguments, `default_action` when none
// holds: evaluate() without the architecture checks, for tools that test many argument values.
[[nodiscard]] const Action& decide(const std::vector<const Rule*>& rules,
                                   const Action& default_action, const std::uint64_t (&args)[6]);

}  // namespace jail::policy
