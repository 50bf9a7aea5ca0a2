#include "run_diff.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_compare.hpp"
#include "run_options.hpp"
#include "subcommand_parse.hpp"

namespace jail::runner {
namespace {

constexpr int kUnreadable = 2;

// As `jail --profile FILE` with no other flag loads it: the same defaults around it.
RunOptions load_run(const std::string& profile) {
  return parse_run_options({"--profile", profile}, {});
}

std::string value_text(const nlohmann::json& value) {
  if (value.is_null()) return "(none)";
  if (value.is_object() && value.contains("kind")) {  // a mount, as run_values writes it
    return value.value("kind", "") + " " + value.value("source", "") + " -> " +
           value.value("target", "") + ", " + value.value("access", "");
  }
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string as_text(const std::vector<RunChange>& changes) {
  std::string out;
  for (const RunChange& change : changes) {
    out += fmt::format("{:<9}{}: {} -> {}{}\n", to_string(change.change), change.field,
                       value_text(change.before), value_text(change.after),
                       change.why.empty() ? "" : " (" + change.why + ")");
  }
  return out;
}

nlohmann::json as_json(const std::string& before, const std::string& after,
                       const std::vector<RunChange>& changes, bool wider, bool narrower) {
  nlohmann::json out = {{"before", before},
                        {"after", after},
                        {"wider", wider},
                        {"narrower", narrower},
                        {"changes", nlohmann::json::array()}};
  for (const RunChange& change : changes) {
    out["changes"].push_back({{"field", change.field},
                              {"change", to_string(change.change)},
                              {"before", change.before},
                              {"after", change.after},
                              {"why", change.why}});
  }
  return out;
}

}  // namespace

int diff_command(int argc, char** argv) {
  CLI::App app{
      "Compare the runs two profiles make, field by field: wider, narrower or changed. Exit 0 "
      "when AFTER is nowhere wider than BEFORE, 1 when it is, 2 when a profile cannot be read.",
      "jail diff"};
  std::string before, after, format = "text";
  app.add_option("BEFORE", before, "profile (TOML), loaded as jail --profile loads it")->required();
  app.add_option("AFTER", after, "profile (TOML), loaded the same way")->required();
  app.add_option("--format", format, "text or json")->check(CLI::IsMember({"text", "json"}));
  if (const auto exit = parse_subcommand(app, argc, argv)) return *exit;

  std::vector<RunChange> changes;
  try {
    const RunOptions a = load_run(before), b = load_run(after);
    changes = compare_runs(a, b);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "jail diff: %s\n", error.what());
    return kUnreadable;
  }
  const auto is = [&](Widening w) {
    return std::any_of(changes.begin(), changes.end(),
                       [&](const RunChange& c) { return c.change == w; });
  };
  const bool wider = is(Widening::wider), narrower = is(Widening::narrower);
  if (format == "json") {
    std::fputs((as_json(before, after, changes, wider, narrower).dump(2) + "\n").c_str(), stdout);
  } else if (changes.empty()) {
    // On stderr, as `jail policy diff` says it: the output stays empty for a script.
    std::fputs("no difference: both profiles make the same run\n", stderr);
  } else {
    std::fputs(as_text(changes).c_str(), stdout);
    std::fputs(wider ? fmt::format("{} is wider than {}\n", after, before).c_str()
                     : fmt::format("{} is nowhere wider than {}\n", after, before).c_str(),
               stdout);
  }
  return wider ? 1 : 0;
}

}  // namespace jail::runner
