#include "limit_message.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "units.hpp"

namespace jail::runner {
namespace {

std::string duration_text(std::chrono::milliseconds duration) {
  if (duration.count() % 1000 == 0) return fmt::format("{} s", duration.count() / 1000);
  return fmt::format("{} ms", duration.count());
}

// Whether an --rlimit entry set `resource`: those win over the limit's own flag.
bool set_by_rlimit_flag(const Limits& limits, int resource) {
  return std::any_of(limits.rlimits.begin(), limits.rlimits.end(),
                     [&](const Rlimit& entry) { return entry.resource == resource; });
}

// " of 2 s (--cpu-time)", " of 1 s (--rlimit cpu)": the soft value, at which the kernel acts
// (SIGXCPU, SIGXFSZ); " (RLIMIT_CPU)" when none is in force that the Result can show.
template <typename Show>
std::string rlimit_text(const Limits& limits, int resource, const char* own_flag, Show show) {
  const std::optional<Rlimit> in_force = rlimit_in_force(limits, resource);
  if (!in_force) return fmt::format(" ({})", rlimit_constant_name(resource));
  if (set_by_rlimit_flag(limits, resource))
    return fmt::format(" of {} (--rlimit {})", show(in_force->soft), rlimit_name(resource));
  return fmt::format(" of {} ({})", show(in_force->soft), own_flag);
}

std::string cpu_time_text(const Limits& limits) {
  return rlimit_text(limits, RLIMIT_CPU, "--cpu-time",
                     [](rlim_t seconds) { return fmt::format("{} s", seconds); });
}

std::string file_size_text(const Limits& limits) {
  return rlimit_text(limits, RLIMIT_FSIZE, "--max-file-size",
                     [](rlim_t bytes) { return human_size(bytes); });
}

std::string memory_text(const Limits& limits) {
  return limits.memory_bytes ? fmt::format(" of {} (--memory)", human_size(*limits.memory_bytes))
                             : std::string(" (--memory)");
}

}  // namespace

std::optional<std::string> limit_message(const Result& result) {
  if (!result.limit_hit) return std::nullopt;
  const Limits& limits = result.limits;
  switch (*result.limit_hit) {
    case Limit::wall_time:
      return fmt::format("the tool was stopped: it ran past its time limit{} (--timeout)",
                         limits.timeout ? " of " + duration_text(*limits.timeout) : "");
    case Limit::cpu_time:
      return "the tool was killed: it used up its CPU time limit" + cpu_time_text(limits);
    case Limit::memory:
      if (result.outcome == Outcome::oom) {
        return "the tool was killed by the kernel's OOM killer: the jail reached its memory limit" +
               memory_text(limits);
      }
      return "a process in the jail was killed by the kernel's OOM killer at the jail's memory "
             "limit" +
             memory_text(limits) + "; the tool went on";
    case Limit::pids:
      return limits.pids ? fmt::format(
                               "a fork or clone in the jail failed: it reached its limit "
                               "of {} processes and threads (--pids)",
                               *limits.pids)
                         : std::string(
                               "a fork or clone in the jail failed: it reached its limit "
                               "of processes and threads (--pids)");
    case Limit::file_size:
      return "the tool was killed by SIGXFSZ: it wrote past its file size limit" +
             file_size_text(limits);
    case Limit::output:
      return std::string("the tool's output was cut at its --max-output limit");
    case Limit::tmpfs:
      return std::string(
          "a tmpfs of the jail ended full, so the tool's writes there failed (ENOSPC): "
          "--tmpfs-size (for /tmp) or --tmpfs DST:SIZE gives it more");
    case Limit::open_files:
      return std::string(
          "a process of the jail used every file descriptor its limit allows, so opening one "
          "more failed (EMFILE): --max-open-files raises it");
    case Limit::dry_run_size:
      return std::string(
          "the dry run's layers filled their cap, so the tool's last writes failed (ENOSPC): "
          "--dry-run-size raises it (they are held in memory while the tool runs)");
  }
  return std::nullopt;
}

}  // namespace jail::runner
