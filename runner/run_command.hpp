// `jail [OPTIONS] -- COMMAND…` (also `jail run …`): flags → jail::Spec → run → exit code.
#pragma once

#include <string>
#include <vector>

#include "jail/result.hpp"
#include "run_options.hpp"

namespace jail::runner {

// Shared with the subcommands that run a tool (rootfs check): the forwarded signals blocked for
// the supervisor's signalfd, the outcome logged, the status JSON written where asked.
void block_forwarded_signals();
void log_result(const Result& result);
// To `status_file_fd` when it is open (jail opened --status-file before the run), else to the
// path, never through a symlink.
void write_status(const RunOptions& run, const Result& result, int status_file_fd = -1);

// `options` are the words before "--" (without "jail" or "run"), `command` the words after it.
[[nodiscard]] int run_command(const std::vector<std::string>& options,
                              const std::vector<std::string>& command);

}  // namespace jail::runner
