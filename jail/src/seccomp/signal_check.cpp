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
                                     static_cast<int>(SYS_pidfd_open),
                                     static_cast<int>(SYS_pidfd_send_signal)};

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

// Strictly below `init`: the init itself is not the tool's to stop or kill (its descendants
// would be left to the host).
bool descends_from(pid_t pid, pid_t init) {
  if (pid == init) return false;
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

// The process a descriptor of the tool's names for pidfd_send_signal: a pidfd ("Pid:" in its
// fdinfo) or a /proc/PID directory, which the call takes too. 0 for anything else.
pid_t process_of_descriptor(pid_t tool, int fd) {
  const UniqueFd tool_fd(static_cast<int>(::syscall(SYS_pidfd_open, tool, 0)));
  if (!tool_fd.valid()) return 0;
  const UniqueFd copy(static_cast<int>(::syscall(SYS_pidfd_getfd, tool_fd.get(), fd, 0)));
  if (!copy.valid()) return 0;
  std::ifstream info("/proc/self/fdinfo/" + std::to_string(copy.get()));
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("Pid:", 0) == 0) {
      try {
        return static_cast<pid_t>(std::stol(line.substr(4)));
      } catch (const std::exception&) {
        return 0;
      }
    }
  }
  char target[64] = {};
  const std::string link = "/proc/self/fd/" + std::to_string(copy.get());
  const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
  const std::string path(target, n > 0 ? static_cast<std::size_t>(n) : 0);
  if (!path.starts_with("/proc/") || path.find_first_not_of("0123456789", 6) != std::string::npos)
    return 0;
  try {
    return static_cast<pid_t>(std::stol(path.substr(6)));
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

policy::Policy with_signals_checked(const policy::Policy& policy) {
  policy::Policy checked = reroute_allowed(
      policy, kSignalCalls, [](std::vector<policy::Rule>& rules, const policy::Rule& allowed) {
        rules.push_back(to_supervisor(allowed));
      });
  std::vector<policy::Rule> first;
  // SIGIO to a process of the tool's choice: fcntl F_SETOWN(_EX), ioctl FIOSETOWN, SIOCSPGRP.
  for (const auto& [nr, command] : {std::pair<long, unsigned long>{SYS_fcntl, F_SETOWN},
                                    {SYS_fcntl, F_SETOWN_EX},
                                    {SYS_ioctl, 0x8901 /* FIOSETOWN */},
                                    {SYS_ioctl, 0x8902 /* SIOCSPGRP */}}) {
    first.push_back(kernel_refusal(static_cast<int>(nr), EPERM,
                                   arg_compare(1, 0xffffffffULL, policy::CmpOp::eq, command),
                                   "(Landlock below ABI 6) SIGIO to a process of the tool's "
                                   "choice"));
  }
  checked.rules.insert(checked.rules.begin(), first.begin(), first.end());
  return checked;
}

bool is_checked_signal_call(int nr) {
  for (const int call : kSignalCalls)
    if (call == nr) return true;
  return false;
}

bool signal_stays_inside(const seccomp_data& data, pid_t caller, pid_t init) {
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
    case SYS_pidfd_send_signal:
      return jails_process(process_of_descriptor(caller, static_cast<int>(data.args[0])), init);
    default:
      return false;
  }
}

}  // namespace jail
