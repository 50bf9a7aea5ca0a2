// `jail [OPTIONS] -- COMMAND…` (also `jail run …`): flags → jail::Spec → run → exit code.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jail/result.hpp"
#include "run_options.hpp"

namespace jail::runner {

// Shared with the subcommands that run a tool (rootfs check): the forwarded signals blocked for
// the supervisor's signalfd, the outcome logged, the Result reported where asked.
void block_forwarded_signals();
void log_result(const Result& result);
void print_timings(const Result& result);
// For a usage error: a setup_error Result to the --status-fd/--status-file (or --profile's) found
// among `options`, so a caller reads the same JSON however jail failed.
void write_usage_failure(const std::vector<std::string>& options, const std::string& message);

// Where a run reports: --status-fd, --status-file and --audit-log. The files are opened before
// the tool runs and never through a symlink: opened afterwards, a link the tool had put at that
// path (in a directory bound writable) had root write the report over any file it pointed to.
class RunReports {
 public:
  // nullopt, after saying why, when a file cannot be opened: then nothing may run.
  [[nodiscard]] static std::optional<RunReports> open(const RunOptions& run);
  RunReports(RunReports&& other) noexcept;
  RunReports(const RunReports&) = delete;
  RunReports& operator=(const RunReports&) = delete;
  RunReports& operator=(RunReports&&) = delete;
  ~RunReports();

  // The Result as JSON to the status fd and file, and a record to the audit log.
  void write(const RunOptions& run, const Result& result) const;

 private:
  RunReports() = default;
  int status_file_ = -1;
  int audit_file_ = -1;
};

// `options` are the words before "--" (without "jail" or "run"), `command` the words after it.
[[nodiscard]] int run_command(const std::vector<std::string>& options,
                              const std::vector<std::string>& command);

}  // namespace jail::runner
