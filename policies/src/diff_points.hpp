// The argument values at which two rule lists for one syscall are compared (see diff.hpp).
#pragma once

#include <cstdint>
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
                                        const std::vector<const Rule*>& b);

}  // namespace jail::policy::detail
