#include "seccomp/signal_check.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <fstream>
#include <string>

#include "seccomp/reroute.hpp"
#include "unique_fd.hpp"

namespace jail {
namespace {

constexpr std::array kSignalCalls = {static_cast<int>(SYS_kill),
                                     static_cast<int>(SYS_tkill),
                                     static_cast<int>(SYS_tgkill),
                                     static_cast<int>(SYS_rt_sigqueueinfo),
                                     static_cast<int>(SYS_rt_tgsigqueueinfo),
                                     static_cast<int>(SYS_pidfd_open)};

// The parent of `pid` from /proc/PID/stat (its fourth field, after the command in parentheses,
// which may itself hold spaces and parentheses); 0 when it is gone.
pid_t parent_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const auto close = text.rfind(')');
  if (close == std::string::npos || close + 4 > text.size()) return 0;
  try {
    return static_cast<pid_t>(std::stol(text.substr(close + 4)));
  } catch (const std::exception&) {
    return 0;
  }
}

bool descends_from(pid_t pid, pid_t init) {
  for (int depth = 0; depth < 4096 && pid > 1; ++depth) {
    if (pid == init) return true;
    pid = parent_of(pid);
  }
  return false;
}

// `pid` is the jail's, checked while a pidfd holds it: a pid the process left, taken by another
// meanwhile, fails the last check (the held one is gone).
bool jails_process(pid_t pid, pid_t init, unsigned flags = 0) {
  if (pid <= 0) return false;
  const UniqueFd held(static_cast<int>(::syscall(SYS_pidfd_open, pid, flags)));
  if (!held.valid()) return false;
  return descends_from(pid, init) &&
         ::syscall(SYS_pidfd_send_signal, held.get(), 0, nullptr, 0) == 0;
}

}  // namespace

policy::Policy with_signals_checked(const policy::Policy& policy) {
  policy::Policy checked = reroute_allowed(
      policy, kSignalCalls, [](std::vector<policy::Rule>& rules, const policy::Rule& allowed) {
        rules.push_back(to_supervisor(allowed));
      });
  std::vector<policy::Rule> first;
  for (const int command : {F_SETOWN, F_SETOWN_EX}) {
    policy::Rule rule;
    rule.syscall = SYS_fcntl;
    rule.action.kind = policy::ActionKind::errno_code;
    rule.action.errno_value = EPERM;
    // Answered in the kernel: the supervisor evaluates the caller's own policy, which allows it.
    rule.action.quiet = true;
    rule.condition =
        arg_compare(1, ~std::uint64_t{0}, policy::CmpOp::eq, static_cast<std::uint64_t>(command));
    rule.condition_text = "arg1 == F_SETOWN(_EX) (SIGIO to a process of its choice, Landlock < 6)";
    first.push_back(std::move(rule));
  }
  checked.rules.insert(checked.rules.begin(), first.begin(), first.end());
  return checked;
}

bool is_checked_signal_call(int nr) {
  for (const int call : kSignalCalls)
    if (call == nr) return true;
  return false;
}

bool signal_stays_inside(const seccomp_data& data, pid_t init) {
  const auto first = static_cast<pid_t>(static_cast<int>(data.args[0]));
  switch (data.nr) {
    case SYS_kill:
      if (first == 0) return true;    // the caller's own process group, in the tool's session
      if (first == -1) return false;  // every process the caller may signal
      return jails_process(first < 0 ? -first : first, init);
    case SYS_tkill:  // a thread id, held as a thread (PIDFD_THREAD, Linux 6.9)
      return jails_process(first, init, O_EXCL);
    case SYS_tgkill:
    case SYS_rt_sigqueueinfo:
    case SYS_rt_tgsigqueueinfo:
    case SYS_pidfd_open:
      return jails_process(first, init);
    default:
      return false;
  }
}

}  // namespace jail
