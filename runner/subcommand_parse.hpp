// A subcommand's arguments, parsed the same way by every subcommand: CLI11's own message for a
// bad one, then exit 2 (usage), or 0 after --help. CLI11's internal codes (104, 106, 109, ...)
// never reach a caller, who could not tell them from a result.
#pragma once

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "policy/suggest.hpp"

namespace jail::runner {

inline constexpr int kBadInvocationExit = 2;

// nullopt: parsed, go on; otherwise the exit code.
[[nodiscard]] inline std::optional<int> parse_subcommand(CLI::App& app, int argc, char** argv) {
  // No subcommand or a misspelt one: CLI11 says only "A subcommand is required", naming neither
  // what was wrong nor what would do.
  if (app.get_require_subcommand_min() > 0 && (argc < 2 || argv[1][0] != '-')) {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      names.push_back(sub->get_name());
    std::string listed;
    for (const std::string& name : names) listed += (listed.empty() ? "" : ", ") + name;
    if (argc < 2) {
      std::fprintf(stderr, "%s: give one of its subcommands: %s (each takes --help)\n",
                   app.get_name().c_str(), listed.c_str());
      return kBadInvocationExit;
    }
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      std::fprintf(stderr,
                   "%s: '%s' is not one of its subcommands%s; they are: %s (each takes --help)\n",
                   app.get_name().c_str(), argv[1],
                   policy::detail::did_you_mean(argv[1], names).c_str(), listed.c_str());
      return kBadInvocationExit;
    }
  }
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : kBadInvocationExit;
  }
}

}  // namespace jail::runner
