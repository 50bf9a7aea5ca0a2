// `within "BOUND"`: a policy that can never be wider than another. Every call gets the stricter
// of the two decisions, so what BOUND kills stays killed and nothing BOUND refuses is allowed,
// whatever the policy's own rules say. `jail policy learn` writes it so that a learned policy
// narrows its base instead of replacing it.
#pragma once

#include "policy/policy.hpp"

namespace jail::policy::detail {

// `own` limited by `bound`, as rules the compiler and the evaluator read like any others. For
// each syscall the product of both rule lists, in order: the first pair whose conditions both
// hold is the pair of first matches, and gets the stricter action (the bound's on a tie between
// two different refusals, so its errno stays). The baseline both start with is kept once, first.
[[nodiscard]] Policy limited_by(Policy own, const Policy& bound);

}  // namespace jail::policy::detail
