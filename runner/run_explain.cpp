#include "run_explain.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "run_fields.hpp"
#include "run_options.hpp"

namespace jail::runner {
namespace {

constexpr int kUsageExit = 125;

constexpr const char* kExplainHelp =
    "Usage: jail explain [RUN OPTIONS] [--format text|json] [-- COMMAND [ARGS...]]\n"
    "\n"
    "Print the run that RUN OPTIONS (jail --help lists them; --profile FILE among them) would\n"
    "make, nothing run: every field of it, each with where it came from: `default`, `profile\n"
    "FILE:LINE:COL`, or `command line`.\n"
    "\n"
    "  --format text|json   text for people (the default), json for machines\n";

// --format belongs to explain, not to the run: taken out before the run's flags are read.
std::string take_format(std::vector<std::string>& options) {
  std::string format = "text";
  for (auto it = options.begin(); it != options.end();) {
    if (*it == "--format" && it + 1 != options.end()) {
      format = *(it + 1);
      it = options.erase(it, it + 2);
    } else if (it->starts_with("--format=")) {
      format = it->substr(9);
      it = options.erase(it);
    } else {
      ++it;
    }
  }
  if (format != "text" && format != "json") {
    throw UsageError(fmt::format("--format '{}': text or json", format));
  }
  return format;
}

std::string as_text(const std::vector<RunField>& fields, const RunOptions& run) {
  std::string out = "The effective run (nothing was run); each field [from where]:\n";
  for (const RunField& field : fields) {
    out += fmt::format("{:<24}{}  [{}]\n", field.name, field.text, field.origin);
    for (const RunField& item : field.items) {
      out += fmt::format("  - {}  [{}]\n", item.text, item.origin);
    }
  }
  for (const std::string& warning : run.log.warnings) out += "warning: " + warning + "\n";
  for (const std::string& note : run.log.notes) out += "note: " + note + "\n";
  return out;
}

// {"fields": {NAME: {"value", "origin"[, "origins"]}}, "warnings": [...], "notes": [...]}:
// a list's "origins" gives each item's, in order.
nlohmann::json as_json(const std::vector<RunField>& fields, const RunOptions& run) {
  nlohmann::json out = {{"fields", nlohmann::json::object()},
                        {"warnings", run.log.warnings},
                        {"notes", run.log.notes}};
  for (const RunField& field : fields) {
    nlohmann::json entry = {{"value", field.value}, {"origin", field.origin}};
    if (field.list) {
      entry["origins"] = nlohmann::json::array();
      for (const RunField& item : field.items) entry["origins"].push_back(item.origin);
    }
    out["fields"][field.name] = std::move(entry);
  }
  return out;
}

}  // namespace

int explain_command(const std::vector<std::string>& options,
                    const std::vector<std::string>& command) {
  try {
    std::vector<std::string> run_options = options;
    const std::string format = take_format(run_options);
    const TracedRunOptions traced = parse_traced_run_options(run_options, command);
    const std::vector<RunField> fields = run_fields(traced);
    const std::string text =
        format == "json" ? as_json(fields, traced.run).dump(2) + "\n" : as_text(fields, traced.run);
    std::fputs(text.c_str(), stdout);
    return 0;
  } catch (const HelpRequested&) {
    std::fputs(kExplainHelp, stdout);
    return 0;
  } catch (const std::exception& error) {
    // As a run: a usage failure, whatever the parser threw.
    spdlog::error("{}", error.what());
    return kUsageExit;
  }
}

}  // namespace jail::runner
