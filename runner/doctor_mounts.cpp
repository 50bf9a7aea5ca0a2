// The filesystem APIs jail builds a root with: the new mount API (open_tree, mount_setattr,
// fsopen/fsmount, move_mount) and openat2's scoped resolution for mount targets.
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "doctor.hpp"

namespace jail::doctor {
namespace {

const std::vector<std::string> kMountApiSteps = {
    "unshare(CLONE_NEWUSER|CLONE_NEWNS)",
    "mount(MS_PRIVATE)",
    "open_tree(OPEN_TREE_CLONE)",
    "mount_setattr(AT_RECURSIVE)",
    "fsopen(tmpfs)",
    "fsconfig",
    "fsmount",
    "move_mount",
};

// Closes an fd on every exit path of the openat2 probe.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

// Returns 0 or the errno of openat2(dir, path) with the given resolve flags.
int try_openat2(int dir, const char* path, unsigned long long resolve) {
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = resolve;
  const long fd = syscall(SYS_openat2, dir, path, &how, sizeof how);
  if (fd < 0) return errno;
  close(static_cast<int>(fd));
  return 0;
}

}  // namespace

Check check_mount_api() {
  Check check;
  check.name = "mount_api";
  // In a forked child inside new user and mount namespaces: the mounts it makes die with it.
  const ProbeResult probe = run_probe(probe_mount_api, ProbeArgs{});
  check.facts["available"] = probe.succeeded();
  check.facts["steps"] = kMountApiSteps;
  if (probe.succeeded()) {
    check.status = Status::ok;
    check.finding =
        "open_tree, mount_setattr(AT_RECURSIVE), fsopen/fsmount and move_mount work in a new user "
        "and mount namespace";
    check.meaning = "jail builds a recursively read-only root from detached mounts";
    return check;
  }
  check.facts["error"] = describe_failure(probe, kMountApiSteps);
  check.status = Status::missing;
  check.finding = "failed at " + describe_failure(probe, kMountApiSteps);
  check.meaning = "jail cannot build its read-only root here; it cannot run";
  return check;
}

Check check_openat2() {
  Check check;
  check.name = "openat2";
  // Harmless in doctor itself: it only opens O_PATH descriptors and closes them again.
  const Fd proc(open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC));
  const int beneath = try_openat2(proc.get(), "sys", RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
  // The point of RESOLVE_BENEATH: a path that climbs out must be refused with EXDEV.
  const int escape = try_openat2(proc.get(), "../proc", RESOLVE_BENEATH);
  const int in_root = try_openat2(proc.get(), "/sys", RESOLVE_IN_ROOT);
  const bool works = proc.get() >= 0 && beneath == 0 && escape == EXDEV && in_root == 0;
  check.facts["available"] = works;
  check.facts["resolve_beneath"] = beneath == 0;
  check.facts["escape_refused"] = escape == EXDEV;
  check.facts["resolve_in_root"] = in_root == 0;
  if (works) {
    check.status = Status::ok;
    check.finding = "RESOLVE_BENEATH and RESOLVE_IN_ROOT work; an escaping path gets EXDEV";
    check.meaning =
        "jail resolves mount targets inside the new root without following symlinks out";
    return check;
  }
  check.status = Status::missing;
  check.finding = "RESOLVE_BENEATH: " + (beneath == 0 ? std::string("ok") : errno_name(beneath)) +
                  "; escape: " +
                  (escape == EXDEV ? std::string("refused")
                   : escape == 0   ? std::string("NOT refused")
                                   : errno_name(escape));
  check.meaning = "jail cannot resolve mount targets safely inside the new root; it cannot run";
  return check;
}

}  // namespace jail::doctor
