#include "policy/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace jail::policy::detail {

// Levenshtein distance, case-insensitive: "af_unix" is one mistake away from AF_UNIX in the
// reader's mind, not seven.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t subst = prev[j - 1] + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  std::size_t best_distance = 0;
  for (const std::string& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (best == nullptr || d < best_distance) {
      best = &c;
      best_distance = d;
    }
  }
  // A third of the word (at least 2 edits) keeps suggestions to plausible typos.
  std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  if (best == nullptr || best_distance > limit) return "";
  return " (did you mean " + *best + "?)";
}

}  // namespace jail::policy::detail
