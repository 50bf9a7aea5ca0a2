#include "limit_message.hpp"

#include <sys/resource.h>

#include <chrono>

#include <fmt/format.h>

#include "units.hpp"

namespace jail::runner {
namespace {

std::string duration_text(std::chrono::milliseconds duration) {
  if (duration.count() % 1000 == 0) return fmt::format("{} s", duration.count() / 1000);
  return fmt::format("{} ms", duration.count());
}

// The hard value of the rlimit `resource` set with --rlimit, if it was.
std::optional<rlim_t> set_by_rlimit_flag(const Limits& limits, int resource) {
  for (const Rlimit& set : limits.rlimits) {
    if (set.resource == resource) return set.hard;
  }
  return std::nullopt;
}

// " of 2 s (--cpu-time)", " of 4 s (--rlimit cpu)", or " (RLIMIT_CPU)" when the Result does not
// say which (a library caller's Spec can set it otherwise).
std::string cpu_time_text(const Limits& limits) {
  if (limits.cpu_time) return fmt::format(" of {} s (--cpu-time)", limits.cpu_time->count());
  if (const auto hard = set_by_rlimit_flag(limits, RLIMIT_CPU))
    return fmt::format(" of {} s (--rlimit {})", *hard, rlimit_name(RLIMIT_CPU));
  return fmt::format(" ({})", rlimit_constant_name(RLIMIT_CPU));
}

std::string file_size_text(const Limits& limits) {
  if (limits.max_file_size)
    return fmt::format(" of {} (--max-file-size)", human_size(*limits.max_file_size));
  if (const auto hard = set_by_rlimit_flag(limits, RLIMIT_FSIZE))
    return fmt::format(" of {} (--rlimit {})", human_size(*hard), rlimit_name(RLIMIT_FSIZE));
  return fmt::format(" ({})", rlimit_constant_name(RLIMIT_FSIZE));
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
  }
  return std::nullopt;
}

}  // namespace jail::runner
