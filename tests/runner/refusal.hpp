// What parse_run_options says of a run it refuses, for tests that read the message.
#pragma once

#include <string>
#include <vector>

#include "run_options.hpp"

namespace jail::runner {

// The UsageError's message for the run `options` (the command is `true`), or "" when accepted.
inline std::string refusal_of(const std::vector<std::string>& options) {
  try {
    (void)parse_run_options(options, {"true"});
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace jail::runner
