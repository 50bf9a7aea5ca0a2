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

  // What the count line says of a kind besides its text (for --log-format json).
  struct Kind {
    std::string syscall;
    std::string rule;
    std::string action;
  };

  // Whether this report of `kind` is to be logged: its first. Later ones are counted.
  [[nodiscard]] bool first(const std::string& kind, const Kind& fields);

  // "<verb> <kind> N more times" for each kind that came again, then the others' count;
  // `event` names them in the structured fields (jail/log_fields.hpp).
  void log_repeats(std::string_view verb, std::string_view event) const;

 private:
  struct Seen {
    Kind fields;
    std::uint64_t times = 0;
  };
  std::map<std::string, Seen, std::less<>> seen_;
  std::uint64_t others_ = 0;
};

}  // namespace jail
