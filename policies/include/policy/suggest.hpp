// "did you mean X?" for misspelt syscall names, constants, errno names and keywords.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace jail::policy::detail {

// " (did you mean X?)" for the closest candidate by edit distance, or "" when nothing is
// close enough to be a plausible typo.
[[nodiscard]] std::string did_you_mean(std::string_view word,
                                       const std::vector<std::string>& candidates);

[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace jail::policy::detail
