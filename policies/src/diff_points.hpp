// The argument values at which two rule lists for one syscall are compared (see diff.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "policy/policy.hpp"

namespace jail::policy::detail {

struct ArgPoints {
  std::vector<int> indexes;                        // the arguments some condition reads
  std::vector<std::vector<std::uint64_t>> values;  // per index, the values to try
  // Every region of the argument space is met: only whole-value comparisons, nothing thinned.
  bool exact = true;
  [[nodiscard]] std::size_t combinations() const;
};

// Beyond this many argument vectors per syscall the largest value lists are thinned, so a
// hostile or generated policy cannot make a diff run for hours.
inline constexpr std::size_t kMaxCombinations = std::size_t{1} << 20;

[[nodiscard]] ArgPoints boundary_points(const std::vector<const Rule*>& a,
                                        const std::vector<const Rule*>& b,
                                        std::size_t max_combinations = kMaxCombinations);

// One argument vector in each region where the two rule lists (first match, then their
// defaults) decide differently — worked out from the conditions themselves, so no difference
// is missed that the boundary points step over (masks that cross, a 32-bit mask beside a
// 64-bit bound). nullopt when the regions are too large to work out.
using Args = std::array<std::uint64_t, 6>;
[[nodiscard]] std::optional<std::vector<Args>> disagreement_witnesses(
    const std::vector<const Rule*>& a, const Action& default_a, const std::vector<const Rule*>& b,
    const Action& default_b);

// One argument vector in each region where `a` decides anything and `b` decides `b_action`:
// where `b` is a question ("allow socket if arg0 == AF_INET"), every way `a` can answer it.
[[nodiscard]] std::optional<std::vector<Args>> witnesses_where(const std::vector<const Rule*>& a,
                                                               const Action& default_a,
                                                               const std::vector<const Rule*>& b,
                                                               const Action& default_b,
                                                               const Action& b_action);

}  // namespace jail::policy::detail
