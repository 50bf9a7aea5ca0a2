// The dry-run session commands: `jail changes`, `jail commit`, `jail undo`, `jail discard`,
// `jail sessions`, and the summary a dry run prints when it ends.
#pragma once

#include "jail/result.hpp"

namespace jail::runner {

// True when argv[1] names one of the session commands.
[[nodiscard]] bool is_session_command(const char* name);

// argv[0] is the command's name ("changes", "commit", …).
[[nodiscard]] int run_session_command(int argc, char** argv);

// After a dry run, on stderr: counts and sizes per kind of change, the session id, what next.
void print_dry_run_summary(const DryRunSession& session);

}  // namespace jail::runner
