// The run flags, parsed with CLI11 into a jail::Spec plus what only the CLI needs.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "jail/spec.hpp"
#include "logging.hpp"

namespace jail::runner {

struct RunOptions {
  Spec spec;
  LogOptions log;
  std::optional<int> status_fd;
  std::optional<std::string> status_file;
  std::optional<std::string> audit_log;
  bool tty_always = false;  // --tty always: asked for, not chosen for a caller's terminal
};

// A bad flag or value: the message says which and why. Exit code 125.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown for --help: the text to print on stdout, exit code 0.
struct HelpRequested {
  std::string text;
};

// `fd` is open for writing (not read-only, not O_PATH): where --status-fd and --log-fd may go.
[[nodiscard]] bool is_writable_fd(int fd);

[[nodiscard]] RunOptions parse_run_options(const std::vector<std::string>& options,
                                           const std::vector<std::string>& command);

// One flag's word that the run took, and where it was written: "command line", or
// "profile p.toml:3:1". A flag with no setting is the default (`jail explain` says so).
struct FlagSetting {
  std::string flag;   // "--memory", "--no-cwd"
  std::string value;  // empty for a switch
  std::string origin;
};

struct TracedRunOptions {
  RunOptions run;
  // In the order applied: the profile's (those the command line did not override), then the
  // command line's.
  std::vector<FlagSetting> settings;
};

// parse_run_options, and the settings it took with their origins.
[[nodiscard]] TracedRunOptions parse_traced_run_options(const std::vector<std::string>& options,
                                                        const std::vector<std::string>& command);

}  // namespace jail::runner
