// A subcommand's arguments, parsed the same way by every subcommand: CLI11's own message for a
// bad one, then exit 2 (usage), or 0 after --help. CLI11's internal codes (104, 106, 109, ...)
// never reach a caller, who could not tell them from a result.
#pragma once

#include <optional>

#include <CLI/CLI.hpp>

namespace jail::runner {

inline constexpr int kBadInvocationExit = 2;

// nullopt: parsed, go on; otherwise the exit code.
[[nodiscard]] inline std::optional<int> parse_subcommand(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : kBadInvocationExit;
  }
}

}  // namespace jail::runner
