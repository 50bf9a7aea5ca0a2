#include "userns_probe.hpp"

#include <sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>

namespace jail {
namespace {

bool probe_cannot_mount() {
  // A fork with no exit signal: a host that reaps every child (SIGCHLD, waitpid(-1)) does not
  // see it. The child makes only system calls.
  const long pid = ::syscall(SYS_clone, 0, nullptr, nullptr, nullptr, 0);
  if (pid == 0) {
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) ::_exit(2);  // the clone will say why
    const bool mounted = ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
    ::_exit(mounted ? 0 : (errno == EPERM || errno == EACCES) ? 1 : 3);
  }
  if (pid < 0) return false;
  int status = 0;
  while (::waitpid(static_cast<pid_t>(pid), &status, __WALL) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 1;
}

}  // namespace

bool userns_restricted_here() {
  if (const char* assumed = std::getenv("JAIL_ASSUME_RESTRICTED_USERNS");
      assumed != nullptr && *assumed != '\0')
    return true;
  std::ifstream knob("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  std::string value;
  return knob >> value && value == "1";
}

bool userns_cannot_mount() {
  static const bool cannot = userns_restricted_here() && probe_cannot_mount();
  return cannot;
}

}  // namespace jail
