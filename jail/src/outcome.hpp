// Parent side: what happened, decided once from everything the supervisor collected.
#pragma once

#include <sys/resource.h>

#include <optional>
#include <vector>

#include "cgroup/cgroup.hpp"
#include "child/report.hpp"
#include "jail/result.hpp"
#include "process_state.hpp"

namespace jail {

struct RunRecord {
  std::vector<child::Report> reports;
  int init_status = 0;  // wait status of the jail's init
  rusage init_usage{};  // includes the tool's, which the init reaped
  std::optional<cgroup::Usage> cgroup_usage;
  bool timed_out = false;
  bool output_truncated = false;
  Denials denials;
  std::optional<Violation> violation;    // a call the policy said kill for
  std::optional<int> runsc_tool_status;  // under runsc: the tool's wait status, as gVisor logged
  std::vector<SyscallUse> syscalls_seen;
  std::optional<Lookups> lookups;
  double wall_ms = 0;
  bool tmpfs_full = false;       // a writable tmpfs of the jail ended with no room left
  bool open_files_full = false;  // a process ended holding every descriptor RLIMIT_NOFILE allows
};

[[nodiscard]] Result decide_result(const RunRecord& record, const Process::State& state);

}  // namespace jail
