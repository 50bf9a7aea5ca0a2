#include "seccomp/write_watch.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>

#include <array>
#include <filesystem>

#include "seccomp/tool_memory.hpp"

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

policy::Rule watching(const policy::Rule& allowed, const WriteCall& call) {
  policy::Rule rule = allowed;
  rule.action = policy::Action{policy::ActionKind::log, 0};
  if (call.flags_arg < 0) return rule;
  policy::Condition writes;
  writes.arg = call.flags_arg;
  writes.mask = kWriteFlags;
  writes.op = policy::CmpOp::ne;
  writes.value = 0;
  if (allowed.condition) {
    policy::Condition both;
    both.kind = policy::Condition::Kind::all_of;
    both.operands = {*allowed.condition, writes};
    rule.condition = both;
  } else {
    rule.condition = writes;
  }
  return rule;
}

bool below(const std::string& path, const std::string& dir) {
  return path == dir || (path.starts_with(dir) && (dir == "/" || path[dir.size()] == '/'));
}

}  // namespace

policy::Policy with_writes_watched(const policy::Policy& policy) {
  policy::Policy watched = policy;
  watched.rules.clear();
  for (const policy::Rule& rule : policy.rules) {
    const WriteCall* call = find_write_call(rule.syscall);
    if (call != nullptr && rule.action.kind == policy::ActionKind::allow) {
      watched.rules.push_back(watching(rule, *call));
    }
    watched.rules.push_back(rule);
  }
  // Rules come first and the first match decides: these catch the calls that would have fallen
  // through to an allowing default.
  if (policy.default_action.kind == policy::ActionKind::allow) {
    for (const WriteCall& call : kWriteCalls) {
      policy::Rule by_default;
      by_default.syscall = call.number;
      by_default.action = policy.default_action;
      by_default.where = policy.default_where;
      watched.rules.push_back(watching(by_default, call));
    }
  }
  return watched;
}

std::optional<std::string> write_in_read_only(const seccomp_notif& request,
                                              const std::string& cwd) {
  const WriteCall* call = find_write_call(static_cast<int>(request.data.nr));
  if (call == nullptr) return std::nullopt;
  if (call->flags_arg >= 0 && (request.data.args[call->flags_arg] & kWriteFlags) == 0)
    return std::nullopt;
  const auto pid = static_cast<pid_t>(request.pid);
  const auto path = read_string(pid, request.data.args[call->path_arg]);
  if (!path || path->empty()) return std::nullopt;
  std::string full = *path;
  if (full.front() != '/') {
    const int dirfd =
        call->dirfd_arg < 0 ? AT_FDCWD : static_cast<int>(request.data.args[call->dirfd_arg]);
    const auto base =
        read_proc_link(pid, dirfd == AT_FDCWD ? "cwd" : "fd/" + std::to_string(dirfd));
    if (!base) return std::nullopt;
    full = *base + "/" + full;
  }
  const std::filesystem::path in_jail = std::filesystem::path(full).lexically_normal();
  if (!below(in_jail.string(), cwd)) return std::nullopt;
  // The directory it lands in, read through the tool's root: a writable mount below the current
  // directory takes the write.
  struct statvfs mount {};
  const std::string parent =
      "/proc/" + std::to_string(pid) + "/root" + in_jail.parent_path().string();
  if (::statvfs(parent.c_str(), &mount) != 0 || (mount.f_flag & ST_RDONLY) == 0)
    return std::nullopt;
  return in_jail.string();
}

}  // namespace jail
