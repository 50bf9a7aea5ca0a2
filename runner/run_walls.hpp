// What every jail run blocks whatever its policy allows: the namespaces, identity and baseline
// that `jail policy explain --capabilities` adds to a policy's own answers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace jail::runner {

struct Wall {
  std::string topic;  // "network", "privileges", …: the category it bears on
  std::string text;
};

// Fixed, true of `--isolation namespaces` (the default where a user namespace can be made) with
// jail's defaults; docs/policies.md lists the same.
[[nodiscard]] const std::vector<Wall>& run_walls();
// A line saying which runs the list holds for.
[[nodiscard]] std::string_view run_walls_scope();

// "Whatever the policy says, …" and the list, wrapped for a terminal.
[[nodiscard]] std::string run_walls_text();
// {"scope": "...", "walls": [{"topic", "text"}]}
[[nodiscard]] nlohmann::json run_walls_json();

}  // namespace jail::runner
