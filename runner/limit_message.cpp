#include "limit_message.hpp"

#include <fmt/format.h>

#include "units.hpp"

namespace jail::runner {
namespace {

std::string duration_text(std::chrono::milliseconds duration) {
  if (duration.count() % 1000 == 0) return fmt::format("{} s", duration.count() / 1000);
  return fmt::format("{} ms", duration.count());
}

std::string value_text(const std::optional<std::uint64_t>& bytes) {
  return bytes ? " of " + human_size(*bytes) : std::string();
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
      return fmt::format("the tool was killed: it used up its CPU time limit{} (--cpu-time)",
                         limits.cpu_time ? fmt::format(" of {} s", limits.cpu_time->count()) : "");
    case Limit::memory:
      return result.outcome == Outcome::oom
                 ? fmt::format(
                       "the tool was killed by the kernel's OOM killer: the jail reached "
                       "its memory limit{} (--memory)",
                       value_text(limits.memory_bytes))
                 : fmt::format(
                       "a process in the jail was killed by the kernel's OOM killer at "
                       "the jail's memory limit{} (--memory); the tool went on",
                       value_text(limits.memory_bytes));
    case Limit::pids:
      return fmt::format(
          "a fork or clone in the jail failed: it reached its limit of {} "
          "processes and threads (--pids)",
          limits.pids ? std::to_string(*limits.pids) : "its");
    case Limit::file_size:
      return fmt::format(
          "the tool was killed by SIGXFSZ: it wrote past its file size limit{} "
          "(--max-file-size)",
          value_text(limits.max_file_size));
    case Limit::output:
      return std::string("the tool's output was cut at its --max-output limit");
  }
  return std::nullopt;
}

}  // namespace jail::runner
