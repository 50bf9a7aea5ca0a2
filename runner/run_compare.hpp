// Whether one effective run lets the tool do more than another, field by field: the rules
// `jail diff` applies (docs/usage.md, "Reviewing a profile change", has the table).
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "run_options.hpp"

namespace jail::runner {

// wider: the after run lets the tool do something the before run did not (a field that both
// widens and narrows counts as wider); narrower: the reverse only; changed: different, neither.
enum class Widening { wider, narrower, changed };
[[nodiscard]] std::string_view to_string(Widening widening);

struct RunChange {
  std::string field;  // "limits.memory", "mounts[/data]", "env[LANG]"
  Widening change = Widening::changed;
  nlohmann::json before, after;  // null: unset, or not there
  std::string why;
};

// A policy either run names could not be loaded: the diagnostics.
class PolicyLoadFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// In field order. Throws PolicyLoadFailure.
[[nodiscard]] std::vector<RunChange> compare_runs(const RunOptions& before,
                                                  const RunOptions& after);

}  // namespace jail::runner
