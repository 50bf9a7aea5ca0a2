#include "outcome.hpp"

#include <sys/resource.h>
#include <sys/wait.h>

#include <csignal>

#include <fmt/format.h>

#include "child/exec.hpp"
#include "runsc/exec_failure.hpp"
#include "runsc/sandbox.hpp"
#include "setup_failure.hpp"

namespace jail {
namespace {

double to_ms(const timeval& time) {
  return time.tv_sec * 1000.0 + time.tv_usec / 1000.0;
}

void fill_from_status(Result& result, int status) {
  if (WIFEXITED(status)) {
    result.outcome = Outcome::exited;
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.outcome = Outcome::signaled;
    result.signal = WTERMSIG(status);
  }
}

void fill_usage(Result& result, const RunRecord& record) {
  result.wall_ms = record.wall_ms;
  result.cpu_user_ms = to_ms(record.init_usage.ru_utime);
  result.cpu_sys_ms = to_ms(record.init_usage.ru_stime);
  result.peak_memory_bytes = static_cast<std::uint64_t>(record.init_usage.ru_maxrss) * 1024;
  if (!record.cgroup_usage) return;
  // The cgroup counts every process of the jail, not only those the init reaped in time.
  const cgroup::Usage& usage = *record.cgroup_usage;
  if (usage.cpu_user_ms) result.cpu_user_ms = static_cast<double>(*usage.cpu_user_ms);
  if (usage.cpu_sys_ms) result.cpu_sys_ms = static_cast<double>(*usage.cpu_sys_ms);
  if (usage.peak_memory_bytes) result.peak_memory_bytes = *usage.peak_memory_bytes;
}

// Names the limit behind what happened; a limit that fired turns the outcome into its own kind
// (timeout, oom) so a caller never confuses it with a crash or an outside kill.
// `signal_sent`: the last signal the caller (or the supervisor) sent; a death by it is theirs.
void apply_limits(Result& result, const RunRecord& record, const Limits& limits, int signal_sent) {
  const bool killed = result.outcome == Outcome::signaled;
  const std::optional<Rlimit> cpu = rlimit_in_force(limits, RLIMIT_CPU);
  const cgroup::Usage usage = record.cgroup_usage.value_or(cgroup::Usage{});
  if (record.timed_out) {
    result.outcome = Outcome::timeout;
    result.limit_hit = Limit::wall_time;
    return;
  }
  if (usage.oom_killed && (killed || result.outcome == Outcome::internal_error)) {
    result.outcome = Outcome::oom;
    result.limit_hit = Limit::memory;
    return;
  }
  // A SIGKILL is the CPU limit's when the tool used about that much CPU: the kernel kills at
  // the hard limit, but the usage read back (cpuacct's user/system split, sampled in ticks)
  // has come out as low as 900 ms of a 1 s limit, so 80% of the hard limit is taken as met. (Of
  // the hard one: a tool that kills itself past the soft limit of --cpu-time is not the limit's.)
  if (killed && cpu && result.signal != signal_sent &&
      (result.signal == SIGXCPU ||
       (result.signal == SIGKILL && cpu->hard != RLIM_INFINITY &&
        result.cpu_user_ms + result.cpu_sys_ms >= 800.0 * static_cast<double>(cpu->hard)))) {
    result.outcome = Outcome::timeout;
    result.limit_hit = Limit::cpu_time;
    return;
  }
  if (killed && result.signal == SIGXFSZ && rlimit_in_force(limits, RLIMIT_FSIZE)) {
    result.limit_hit = Limit::file_size;
  } else if (result.output_truncated) {
    // The cut is what a tool that then dies of SIGPIPE or exits on EPIPE ran into.
    result.limit_hit = Limit::output;
  } else if (usage.oom_killed) {
    result.limit_hit = Limit::memory;  // a process of the jail was killed, the tool went on
  } else if (usage.pids_limit_hit) {
    result.limit_hit = Limit::pids;
  } else if (record.open_files_full) {
    result.limit_hit = Limit::open_files;
  } else if (record.tmpfs_full) {
    result.limit_hit = Limit::tmpfs;
  }
}

// Whether the tool's end as the sentry logged it is one that runsc run's exit `code` stands for
// (exit n: n; death by signal n: 128+n). Only then is it believed: the line only tells apart
// what that code folds together — which a tool could choose anyway, by exiting or by killing
// itself — while a line the tool got into the log (a file name it made up is logged verbatim),
// left last when the sentry itself was killed (by the memory limit), must change nothing.
bool logged_status_agrees(const std::optional<int>& logged, int code) {
  if (!logged) return false;
  if (WIFEXITED(*logged)) return WEXITSTATUS(*logged) == code;
  return WIFSIGNALED(*logged) && 128 + WTERMSIG(*logged) == code;
}

}  // namespace

Result decide_result(const RunRecord& record, const Process::State& state) {
  Result result;
  result.limits = state.limits;
  result.denials = record.denials;
  result.output_truncated = record.output_truncated;
  result.syscalls_seen = record.syscalls_seen;
  result.lookups = record.lookups;
  fill_usage(result, record);

  const child::Report* setup = nullptr;
  const child::Report* exec = nullptr;
  const child::Report* exited = nullptr;
  for (const auto& report : record.reports) {
    if (report.kind == child::ReportKind::setup_failed && setup == nullptr) setup = &report;
    if (report.kind == child::ReportKind::exec_failed && exec == nullptr) exec = &report;
    if (report.kind == child::ReportKind::tool_exited) exited = &report;
  }
  if (setup != nullptr) {
    result.outcome = Outcome::setup_error;
    result.error = describe_setup_failure(*setup, state.context);
    return result;
  }
  if (exec != nullptr) {
    result.outcome = Outcome::setup_error;
    result.error = describe_exec_failure(exec->err, state.context, exec->detail);
    return result;
  }
  if (exited != nullptr) {
    fill_from_status(result, exited->detail);
  } else if (state.runsc && WIFEXITED(record.init_status) &&
             logged_status_agrees(record.runsc_tool_status, WEXITSTATUS(record.init_status))) {
    // The tool's own end, as the sentry logged it.
    fill_from_status(result, *record.runsc_tool_status);
  } else if (state.runsc && WIFEXITED(record.init_status)) {
    // No word from the sentry: runsc run exits with the container's status, a signal death
    // as 128+n.
    const int code = WEXITSTATUS(record.init_status);
    if (code == 128) {
      // runsc's own failures (it could not create or start the sandbox) exit 128, with its
      // message on stderr and in its log: a command not found or not executable is told apart
      // there, and answered as a native run answers it (127, 126).
      result.outcome = Outcome::setup_error;
      const std::optional<RunscExecFailure> failure =
          exec_failure_in_runsc_error(state.runsc->gate().take_written());
      // A load of a file the jail holds that finds "no such file": its interpreter is missing.
      const int detail = failure && failure->loading && state.runsc->command_found()
                             ? child::kExecCommandExists
                             : -1;
      result.error = failure ? describe_exec_failure(failure->err, state.context, detail)
                             : SetupFailure{"runsc", 0,
                                            "runsc could not start the sandbox (exit 128); its "
                                            "own message is above on stderr"};
      return result;
    }
    if (code > 128 && code < 128 + 65) {
      result.outcome = Outcome::signaled;
      result.signal = code - 128;
    } else {
      fill_from_status(result, record.init_status);
    }
  } else if (WIFSIGNALED(record.init_status) &&
             (record.timed_out || WTERMSIG(record.init_status) == state.signal_sent)) {
    // The init itself was killed on purpose (Process::kill, or the timeout's SIGKILL).
    fill_from_status(result, record.init_status);
  } else {
    result.outcome = Outcome::internal_error;
    result.error = SetupFailure{
        "supervise", 0,
        fmt::format("the jail's init (host pid {}) ended without a report (wait status {:#x})",
                    state.pid, record.init_status)};
  }
  if (record.violation) {
    // The supervisor ended the jail for this call: that, not the SIGKILL, is what happened.
    result.outcome = Outcome::violation;
    result.violation = record.violation;
    result.error.reset();
    return result;
  }
  apply_limits(result, record, state.limits, state.signal_sent);
  if (result.outcome == Outcome::oom) result.error.reset();
  return result;
}

}  // namespace jail
