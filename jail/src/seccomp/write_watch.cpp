#include "seccomp/write_watch.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>

#include <array>
#include <filesystem>

#include "seccomp/reroute.hpp"
#include "seccomp/tool_memory.hpp"
#include "spec_check.hpp"

namespace jail {
namespace {

constexpr std::uint64_t kWriteFlags = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC;

struct WriteCall {
  int number;
  int dirfd_arg;  // -1: relative to the cwd
  int path_arg;
  int flags_arg;  // -1: every call writes
};

constexpr std::array kWriteCalls = {
    WriteCall{SYS_open, -1, 0, 1},    WriteCall{SYS_openat, 0, 1, 2},
    WriteCall{SYS_creat, -1, 0, -1},  WriteCall{SYS_mkdir, -1, 0, -1},
    WriteCall{SYS_mkdirat, 0, 1, -1},
};

const WriteCall* find_write_call(int number) {
  for (const WriteCall& call : kWriteCalls) {
    if (call.number == number) return &call;
  }
  return nullptr;
}

// Before `allowed`: the same call sent to the supervisor when it writes (open and openat: a write
// flag in their flags).
policy::Rule watching(const policy::Rule& allowed, const WriteCall& call) {
  policy::Rule rule = to_supervisor(allowed);
  if (call.flags_arg >= 0) {
    rule.condition =
        both(allowed.condition, arg_compare(call.flags_arg, kWriteFlags, policy::CmpOp::ne, 0));
  }
  return rule;
}

}  // namespace

policy::Policy with_writes_watched(const policy::Policy& policy) {
  std::vector<int> numbers;
  for (const WriteCall& call : kWriteCalls) numbers.push_back(call.number);
  return reroute_allowed(policy, numbers,
                         [](std::vector<policy::Rule>& rules, const policy::Rule& allowed) {
                           rules.push_back(watching(allowed, *find_write_call(allowed.syscall)));
                           rules.push_back(allowed);
                         });
}

std::optional<std::string> write_in_read_only(const seccomp_notif& request,
                                              const std::string& cwd) {
  const WriteCall* call = find_write_call(static_cast<int>(request.data.nr));
  if (call == nullptr) return std::nullopt;
  if (call->flags_arg >= 0 && (request.data.args[call->flags_arg] & kWriteFlags) == 0)
    return std::nullopt;
  const auto pid = static_cast<pid_t>(request.pid);
  const int dirfd =
      call->dirfd_arg < 0 ? AT_FDCWD : static_cast<int>(request.data.args[call->dirfd_arg]);
  const auto in_jail = path_argument(pid, request.data.args[call->path_arg], dirfd);
  if (!in_jail || in_jail->empty() || !jail_path_within(*in_jail, cwd)) return std::nullopt;
  // The directory it lands in, read through the tool's root: a writable mount below the current
  // directory takes the write.
  struct statvfs mount {};
  const std::string parent = "/proc/" + std::to_string(pid) + "/root" +
                             std::filesystem::path(*in_jail).parent_path().string();
  if (::statvfs(parent.c_str(), &mount) != 0 || (mount.f_flag & ST_RDONLY) == 0)
    return std::nullopt;
  return in_jail;
}

}  // namespace jail
