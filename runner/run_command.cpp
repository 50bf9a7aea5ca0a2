#include "run_command.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "audit_log.hpp"
#include "jail/error.hpp"
#include "jail/launch.hpp"
#include "jail/signals.hpp"
#include "limit_message.hpp"
#include "open_output.hpp"
#include "profile.hpp"
#include "run_options.hpp"
#include "session_commands.hpp"

namespace jail::runner {
namespace {

constexpr int kUsageExit = 125;

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      spdlog::error("cannot write the status JSON to fd {}: {}", fd, std::strerror(errno));
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

// An fd for --status-file or --audit-log, or -1 (after saying why) when it cannot be opened.
int open_report_file(const std::optional<std::string>& path, const char* flag, int mode_flag,
                     mode_t permissions) {
  if (!path) return -1;
  const int fd =
      open_output(*path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | mode_flag, permissions);
  if (fd < 0) {
    const int err = errno;
    spdlog::error("cannot open {} {}: {}{}; nothing was run", flag, *path, std::strerror(err),
                  open_output_hint(err));
  }
  return fd;
}

}  // namespace

// --trace-timing: on stderr even with -q (it was asked for), after the tool's own output.
void print_timings(const Result& result) {
  double previous = 0;
  std::string text = "jail: timing (ms since launch, +ms since the phase before):\n";
  for (const auto& phase : result.timings) {
    text +=
        fmt::format("jail: {:10.3f} {:+9.3f}  {}\n", phase.ms, phase.ms - previous, phase.phase);
    previous = phase.ms;
  }
  write_all(STDERR_FILENO, text);
}

std::optional<RunReports> RunReports::open(const RunOptions& run) {
  RunReports reports;
  reports.status_file_ = open_report_file(run.status_file, "--status-file", O_TRUNC, 0644);
  reports.audit_file_ = open_report_file(run.audit_log, "--audit-log", O_APPEND, 0600);
  if ((run.status_file && reports.status_file_ < 0) || (run.audit_log && reports.audit_file_ < 0))
    return std::nullopt;
  return reports;
}

RunReports::RunReports(RunReports&& other) noexcept
    : status_file_(std::exchange(other.status_file_, -1)),
      audit_file_(std::exchange(other.audit_file_, -1)) {}

RunReports::~RunReports() {
  if (status_file_ >= 0) ::close(status_file_);
  if (audit_file_ >= 0) ::close(audit_file_);
}

void RunReports::write(const RunOptions& run, const Result& result) const {
  const std::string json = to_json(result) + "\n";
  if (run.status_fd) write_all(*run.status_fd, json);
  if (status_file_ >= 0) write_all(status_file_, json);
  if (audit_file_ >= 0) append_audit_record(audit_file_, *run.audit_log, run.spec, result);
}

// Signals for the tool are blocked here and read by the supervisor from a signalfd, so none is
// lost between now and the moment the jail exists.
void block_forwarded_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (const int sig : kForwardedSignals) sigaddset(&set, sig);
  sigaddset(&set, SIGWINCH);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  // A closed status pipe must show up as a write error, not kill jail before it reports.
  ::signal(SIGPIPE, SIG_IGN);
}

void log_result(const Result& result) {
  // Before the line below: a limit that ended the run is news to a person, which exit code 124
  // or 137 alone is not (warn, shown unless -q).
  if (const std::optional<std::string> limit = limit_message(result)) spdlog::warn("{}", *limit);
  if (result.error) {
    spdlog::error("{}", result.error->message);
  } else if (result.outcome == Outcome::signaled) {
    spdlog::info("the tool was killed by signal {} ({})", result.signal,
                 sigabbrev_np(result.signal));
  } else if (result.outcome == Outcome::exited) {
    spdlog::info("the tool exited with {} after {:.0f} ms", result.exit_code, result.wall_ms);
  } else {
    spdlog::info("the run ended: {}{} after {:.0f} ms", to_string(result.outcome),
                 result.limit_hit ? fmt::format(" ({} limit)", to_string(*result.limit_hit)) : "",
                 result.wall_ms);
  }
}

// A bad flag still leaves a status for a caller that asked for one: it reads the same JSON shape
// whether jail failed on its flags or in the jail.
void write_usage_failure(const std::vector<std::string>& options, const std::string& message) {
  RunOptions run;
  std::optional<std::string> profile;
  for (std::size_t i = 0; i < options.size(); ++i) {
    const std::string& word = options[i];
    const bool has_value = i + 1 < options.size();
    try {
      if (word == "--status-file" && has_value) run.status_file = options[i + 1];
      if (word.starts_with("--status-file=")) run.status_file = word.substr(14);
      if (word == "--status-fd" && has_value) run.status_fd = std::stoi(options[i + 1]);
      if (word.starts_with("--status-fd=")) run.status_fd = std::stoi(word.substr(12));
      if (word == "--profile" && has_value) profile = options[i + 1];
      if (word.starts_with("--profile=")) profile = word.substr(10);
    } catch (const std::exception&) {
      // not a number: that is the usage error itself; there is no fd to write to
    }
  }
  // As parse_run_options: the command line's own --status-file wins over the profile's.
  if (!run.status_file && profile) run.status_file = profile_status_file(*profile);
  if (run.status_fd && !is_writable_fd(*run.status_fd)) run.status_fd.reset();
  if (!run.status_fd && !run.status_file) return;
  Result result;
  result.outcome = Outcome::setup_error;
  result.error = SetupFailure{"usage", EINVAL, message};
  if (const std::optional<RunReports> reports = RunReports::open(run)) reports->write(run, result);
}

int run_command(const std::vector<std::string>& options, const std::vector<std::string>& command) {
  RunOptions run;
  try {
    run = parse_run_options(options, command);
    setup_logging(run.log);
  } catch (const HelpRequested& help) {
    std::fputs(help.text.c_str(), stdout);
    return 0;
  } catch (const std::exception& error) {
    spdlog::error("{}", error.what());
    write_usage_failure(options, error.what());
    return kUsageExit;
  }

  const std::optional<RunReports> reports = RunReports::open(run);
  if (!reports) return kUsageExit;  // 125, jail's own failure: nothing ran

  block_forwarded_signals();
  const Result result = jail::run(run.spec);
  log_result(result);
  if (run.spec.trace_timing) print_timings(result);
  if (result.dry_run && !run.log.quiet) print_dry_run_summary(*result.dry_run);
  reports->write(run, result);
  return exit_code_for(result);
}

}  // namespace jail::runner
