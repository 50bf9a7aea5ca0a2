// The effective run field by field, each with where it came from: every field of the Spec and
// the RunOptions that parse_traced_run_options made, for `jail explain`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_options.hpp"

namespace jail::runner {

inline constexpr const char* kDefaultOrigin = "default";

// One field: "limits.memory", its value (null: unset), how a person reads it, and its origin
// ("default", "command line", "profile p.toml:3:1"). A list's items carry their own origins.
struct RunField {
  std::string name;
  nlohmann::json value;
  std::string text;
  std::string origin;
  std::vector<RunField> items;
  bool list = false;
};

[[nodiscard]] std::vector<RunField> run_fields(const TracedRunOptions& traced);

}  // namespace jail::runner
