#include "seccomp/exit_watch.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <string>

#include <fmt/format.h>

#include "jail/error.hpp"
#include "policy/evaluate.hpp"
#include "seccomp/reroute.hpp"
#include "unique_fd.hpp"

namespace jail {

policy::Policy with_exits_watched(const policy::Policy& policy, const std::string& name) {
  seccomp_data exit_call{};
  exit_call.nr = SYS_exit;
  exit_call.arch = AUDIT_ARCH_X86_64;
  const policy::Decision decision = policy::evaluate(policy, exit_call);
  if (decision.action.kind != policy::ActionKind::allow) {
    throw Error("policy", EINVAL,
                fmt::format("policy {} must allow exit plainly (not log) under an open-files "
                            "limit (--max-open-files, --rlimit nofile): jail ends a failed start "
                            "with it there; it decides '{}' at {}:{}",
                            name, policy::to_string(decision.action), decision.where.file,
                            decision.where.line));
  }
  constexpr std::array kExits = {static_cast<int>(SYS_exit_group)};
  return reroute_allowed(policy, kExits,
                         [](std::vector<policy::Rule>& rules, const policy::Rule& allowed) {
                           rules.push_back(to_supervisor(allowed));
                         });
}

std::optional<std::uint64_t> descriptors_at_limit(pid_t pid, std::uint64_t limit) {
  if (limit == 0) return std::nullopt;
  const UniqueFd fds(
      ::open(fmt::format("/proc/{}/fd", pid).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fds.valid()) return std::nullopt;
  // Every descriptor of the jail is below the limit (jail sets it before the tool's execve, and
  // dup2 above it fails), so a table without limit-1 has room.
  struct stat last {};
  if (::fstatat(fds.get(), std::to_string(limit - 1).c_str(), &last, AT_SYMLINK_NOFOLLOW) != 0) {
    return std::nullopt;
  }
  std::uint64_t count = 0;
  alignas(dirent64) std::array<char, 16384> buffer{};
  for (;;) {
    const long n = ::syscall(SYS_getdents64, fds.get(), buffer.data(), buffer.size());
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    for (long at = 0; at < n;) {
      const auto* entry = reinterpret_cast<const dirent64*>(buffer.data() + at);
      if (entry->d_name[0] != '.') ++count;
      at += entry->d_reclen;
    }
  }
  if (count < limit) return std::nullopt;
  return count;
}

}  // namespace jail
