// Identical reports are logged once: the first as it comes, the repeats as one count when the
// run ends. A tool that makes the same denied call a million times costs one line, not a million
// (100,000 denials wrote 11.7 MB to --log-file, and a slow reader of jail's stderr stalled it).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace jail {

class RepeatFilter {
 public:
  // Kinds told apart; past them a report is counted among "others", so memory stays bounded
  // whatever a tool sprays.
  static constexpr std::size_t kKinds = 256;

  // Whether this report of `kind` is to be logged: its first. Later ones are counted.
  [[nodiscard]] bool first(const std::string& kind);

  // "<verb> <kind> N more times" for each kind that came again, then the others' count.
  void log_repeats(std::string_view verb) const;

 private:
  std::map<std::string, std::uint64_t, std::less<>> times_;
  std::uint64_t others_ = 0;
};

}  // namespace jail
