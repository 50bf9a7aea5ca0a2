// `jail policy diff --summary`: a policy change in the categories a reviewer asks about (can it
// reach the network? start processes?), one line each, where the full diff runs to hundreds.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "policy/categories.hpp"
#include "policy/diff.hpp"

namespace jail::policy {

// The changed syscalls of one category, by kind of change, in the diff's (number) order.
struct CategoryChanges {
  Category category = Category::system;
  std::vector<std::string> wider, narrower, mixed, changed, restated;
  // Those of `wider` and `mixed` (wider somewhere) that lint calls dangerous, and of them the
  // ones AFTER lets run (allow or log) where BEFORE did not: kill → errno is wider too.
  std::vector<std::string> dangerous_wider, dangerous_run;
};

// One entry per category, in kCategories order, also for categories without a change.
[[nodiscard]] std::vector<CategoryChanges> by_category(const PolicyDiff& d);

// A header, a line per category ("network  2 wider (socket, connect), 0 narrower") naming every
// dangerous call AFTER now lets run, the default when it changed, and the full diff's verdict.
[[nodiscard]] std::string diff_summary_text(const PolicyDiff& d);
// {"before", "after", "wider", "narrower", "default", "categories": {"network": {"wider": 2,
// "narrower": 0, "mixed": 0, "changed": 0, "restated": 0, "dangerous_wider": [...],
// "dangerous_run": [...], "syscalls": {"wider": [...], …}}, …}}; see LANGUAGE.md.
[[nodiscard]] nlohmann::json diff_summary_json(const PolicyDiff& d);

}  // namespace jail::policy
