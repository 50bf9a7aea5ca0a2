// The `jail` executable: picks the subcommand and hands over. Every path out returns an exit
// code from the contract in docs/architecture.md; nothing escapes as an uncaught exception.
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "doctor.hpp"
#include "export_command.hpp"
#include "jail/closed_stdio.hpp"
#include "leading_options.hpp"
#include "learn_command.hpp"
#include "logging.hpp"
#include "policy/suggest.hpp"
#include "policy_command.hpp"
#include "rootfs_command.hpp"
#include "run_command.hpp"
#include "run_diff.hpp"
#include "run_explain.hpp"
#include "session_commands.hpp"
#include "version.hpp"

namespace {

constexpr int kSetupFailed = 125;

// What `jail WORD` takes as a subcommand rather than a command (which comes after "--").
const std::vector<std::string> kSubcommands = {"run",    "explain",    "diff",    "policy",
                                               "rootfs", "export-oci", "doctor",  "changes",
                                               "commit", "undo",       "discard", "sessions"};

int dispatch(int argc, char** argv);

bool is_subcommand(const char* word) {
  return std::find(kSubcommands.begin(), kSubcommands.end(), word) != kSubcommands.end();
}

// "jail -q commit ID": the logging options before a subcommand. Those that read their own flags
// (run, export-oci, policy learn) get them after their name; the others get jail's logging set
// up from them, then their own arguments.
int dispatch_after_leading_options(int argc, char** argv,
                                   const jail::runner::LeadingOptions& leading) {
  std::vector<std::string> words{argv[0]};
  const std::string subcommand = argv[leading.next];
  int rest = leading.next;
  if (subcommand == "run" || subcommand == "export-oci" || subcommand == "explain") {
    words.push_back(subcommand);
    words.insert(words.end(), leading.words.begin(), leading.words.end());
    rest = leading.next + 1;
  } else if (subcommand == "policy" && leading.next + 1 < argc &&
             std::strcmp(argv[leading.next + 1], "learn") == 0) {
    words.insert(words.end(), {"policy", "learn"});
    words.insert(words.end(), leading.words.begin(), leading.words.end());
    rest = leading.next + 2;
  } else {
    try {
      jail::runner::setup_logging(leading.log);
    } catch (const std::runtime_error& error) {
      spdlog::error("{}", error.what());
      return kSetupFailed;
    }
  }
  words.insert(words.end(), argv + rest, argv + argc);
  std::vector<char*> pointers;
  for (std::string& word : words) pointers.push_back(word.data());
  pointers.push_back(nullptr);
  return dispatch(static_cast<int>(words.size()), pointers.data());
}

int dispatch(int argc, char** argv) {
  if (const auto leading = jail::runner::read_leading_options(argc, argv);
      !leading.words.empty() && leading.next < argc && is_subcommand(argv[leading.next])) {
    return dispatch_after_leading_options(argc, argv, leading);
  }
  const bool learn =
      argc >= 3 && std::strcmp(argv[1], "policy") == 0 && std::strcmp(argv[2], "learn") == 0;
  if (argc == 1) {
    spdlog::error(
        "no command given: write jail [OPTIONS] -- COMMAND [ARGS...], e.g. jail -- python3 "
        "script.py; jail --help lists the options and the subcommands");
    return kSetupFailed;
  }
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::fputs(jail::runner::version_text().c_str(), stdout);
    return 0;
  }
  if (argc >= 2 && std::strcmp(argv[1], "doctor") == 0) return run_doctor(argc - 1, argv + 1);
  if (argc >= 2 && jail::runner::is_session_command(argv[1])) {
    return jail::runner::run_session_command(argc - 1, argv + 1);
  }
  if (argc >= 2 && std::strcmp(argv[1], "rootfs") == 0)
    return jail::runner::run_rootfs_command(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "policy") == 0 && !learn)
    return jail::runner::run_policy_command(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "diff") == 0)
    return jail::runner::diff_command(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "explain") == 0) {
    // The run's flags, and a command after "--" if any: explain runs nothing, so needs none.
    std::vector<std::string> options, command;
    bool after_separator = false;
    for (int i = 2; i < argc; ++i) {
      if (!after_separator && std::strcmp(argv[i], "--") == 0) {
        after_separator = true;
      } else {
        (after_separator ? command : options).emplace_back(argv[i]);
      }
    }
    return jail::runner::explain_command(options, command);
  }

  int first = 1;
  const bool export_oci = argc >= 2 && std::strcmp(argv[1], "export-oci") == 0;
  if (argc >= 2 && (std::strcmp(argv[1], "run") == 0 || export_oci)) first = 2;
  if (learn) first = 3;
  std::vector<std::string> options;
  std::vector<std::string> command;
  bool after_separator = false;
  for (int i = first; i < argc; ++i) {
    if (!after_separator && std::strcmp(argv[i], "--") == 0) {
      after_separator = true;
    } else {
      (after_separator ? command : options).emplace_back(argv[i]);
    }
  }
  const bool wants_help = std::find_if(options.begin(), options.end(), [](const std::string& o) {
                            return o == "-h" || o == "--help";
                          }) != options.end();
  if (!after_separator && !wants_help) {
    // A first word that is no option is most often a subcommand misspelt ("jail sesions"); after
    // a subcommand that was spelt right ("jail run sh"), the '--' is what is missing.
    const std::string near = first == 1 && argc >= 2 && argv[1][0] != '-'
                                 ? jail::policy::detail::did_you_mean(argv[1], kSubcommands)
                                 : "";
    if (!near.empty()) {
      spdlog::error("'{}' is not a subcommand{}; to run it as a command: jail [OPTIONS] -- {}",
                    argv[1], near, argv[1]);
    } else {
      spdlog::error(
          "missing '--' before the command: write jail [OPTIONS] -- COMMAND [ARGS...], e.g. "
          "jail -- python3 script.py (or a subcommand: {})",
          fmt::join(kSubcommands, ", "));
    }
    return kSetupFailed;
  }
  if (after_separator && command.empty()) {
    spdlog::error("no command after '--': write jail [OPTIONS] -- COMMAND [ARGS...]");
    return kSetupFailed;
  }
  if (learn) return jail::runner::learn_command(options, command);
  if (export_oci) return jail::runner::export_oci_command(options, command);
  return jail::runner::run_command(options, command);
}

}  // namespace

int main(int argc, char** argv) {
  // Until the flags are read, jail's messages go to stderr with the default settings; spdlog's
  // own default logger writes to stdout, which belongs to the tool.
  jail::runner::setup_logging({});
  try {
    jail::occupy_closed_stdio();
    return dispatch(argc, argv);
  } catch (const std::exception& error) {
    spdlog::critical("internal error: {}", error.what());
  } catch (...) {
    spdlog::critical("internal error: unknown exception");
  }
  return kSetupFailed;
}
