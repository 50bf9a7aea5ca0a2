#include "seccomp/lookup_recorder.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <optional>

#include "log.hpp"
#include "seccomp/lookup_calls.hpp"
#include "seccomp/tool_memory.hpp"
#include "spec_check.hpp"

namespace jail {
namespace {

// Whether the call stops at a symlink at the end of its path, read from its arguments (and for
// openat2 from its struct open_how in the tool's memory; unreadable: the kernel fails the call
// with EFAULT, and followed is the answer that asks the most of the root).
FinalLink final_link(const LookupCall& call, const seccomp_notif& request) {
  const std::uint64_t argument = call.flags_arg < 0 ? 0 : request.data.args[call.flags_arg];
  // O_CREAT|O_EXCL never follows a final link: open(2) fails with EEXIST on one.
  const auto open_stops = [](std::uint64_t open_flags) {
    return (open_flags & O_NOFOLLOW) != 0 ||
           (open_flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
  };
  bool stops = false;
  switch (call.no_follow) {
    case NoFollow::never:
      break;
    case NoFollow::always:
      stops = true;
      break;
    case NoFollow::at_flags:
      stops = (argument & AT_SYMLINK_NOFOLLOW) != 0;
      break;
    case NoFollow::open_flags:
      stops = open_stops(argument);
      break;
    case NoFollow::open_how: {
      open_how how{};
      iovec local{&how, sizeof how};
      iovec remote{reinterpret_cast<void*>(argument), sizeof how};
      const auto pid = static_cast<pid_t>(request.pid);
      if (::process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(sizeof how)) {
        stops = open_stops(how.flags) || (how.resolve & RESOLVE_NO_SYMLINKS) != 0;
      }
      break;
    }
  }
  return stops ? FinalLink::not_followed : FinalLink::followed;
}

}  // namespace

LookupRecorder::LookupRecorder(std::vector<std::string> jail_mounts)
    : jail_mounts_(std::move(jail_mounts)) {}

bool LookupRecorder::traces(int syscall) {
  return find_lookup_call(syscall) != nullptr;
}

void LookupRecorder::record(const seccomp_notif& request, int listener) {
  const LookupCall* call = find_lookup_call(request.data.nr);
  if (call == nullptr) return;
  // The kernel reads a dirfd argument as an int.
  const int dirfd =
      call->dirfd_arg < 0 ? AT_FDCWD : static_cast<int>(request.data.args[call->dirfd_arg]);
  std::optional<std::string> path =
      path_argument(static_cast<pid_t>(request.pid), request.data.args[call->path_arg], dirfd);
  if (path && path->empty()) return;  // AT_EMPTY_PATH or an error the kernel reports: no lookup
  // Everything above was read from a task named by pid; the notification still pending means
  // that task is still the one that made the call.
  const FinalLink link = final_link(*call, request);
  std::uint64_t id = request.id;
  if (!path || ::ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0) {
    ++lookups_.unreadable;
    return;
  }
  std::string normal = std::move(*path);
  for (const auto& mount : jail_mounts_) {
    if (jail_path_within(normal, mount)) {
      ++lookups_.under_jail_mounts;
      return;
    }
  }
  // Keyed by the path and how its final link was taken: lstat then stat of one symlink needs
  // the link and then its target too. An execve is kept apart from other lookups of its path
  // (a shell stats each PATH entry first): what the kernel looks up itself to run the file, its
  // interpreter, is found from it (jail rootfs check).
  const bool runs = call->number == SYS_execve || call->number == SYS_execveat;
  std::string key = (runs ? "x" : link == FinalLink::followed ? "f" : "n") + normal;
  if (seen_.contains(key)) return;
  if (lookups_.paths.size() >= kMaxPaths || bytes_ + normal.size() > kMaxPathBytes) {
    ++lookups_.beyond_limit;
    return;
  }
  bytes_ += normal.size();
  seen_.insert(std::move(key));
  lookups_.paths.push_back(FileLookup{std::move(normal), call->name, link});
}

}  // namespace jail
