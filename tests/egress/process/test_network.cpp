// Test support: the test's own network namespace (lo up, 192.0.2.1 on it) and a private
// /etc/hosts bind-mounted in its own mount namespace.
#include "test_network.hpp"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace jail::egress::test {

namespace {

bool bring_lo_up() {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  const bool up = fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &request) == 0 &&
                  (request.ifr_flags |= IFF_UP, ioctl(fd, SIOCSIFFLAGS, &request) == 0);
  if (fd >= 0) close(fd);
  return up;
}

bool run_ip(const char* address) {
  const pid_t pid = fork();
  if (pid == 0) {
    execlp("ip", "ip", "addr", "add", address, "dev", "lo", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

bool mount_hosts(const std::string& hosts_file) {
  char directory[] = "/tmp/egress-hosts-XXXXXX";
  if (mkdtemp(directory) == nullptr) return false;
  const std::string path = std::string(directory) + "/hosts";
  { std::ofstream(path) << hosts_file; }
  chmod(path.c_str(), 0644);
  bool mounted = mount(path.c_str(), "/etc/hosts", nullptr, MS_BIND, nullptr) == 0;
  if (!mounted && errno == ENOENT) {
    // An earlier test of this process left its (deleted) hosts file mounted in the namespace
    // this one was copied from; this namespace is private, so it goes here only.
    mounted = umount2("/etc/hosts", MNT_DETACH) == 0 &&
              mount(path.c_str(), "/etc/hosts", nullptr, MS_BIND, nullptr) == 0;
  }
  const int saved = errno;
  // The mount holds the file; the directory can go at once.
  std::filesystem::remove_all(directory);
  errno = saved;
  return mounted;
}

}  // namespace

bool enter_test_network(const std::string& hosts_file, std::string& why) {
  if (geteuid() != 0) {
    why = "needs root for a network namespace of its own";
    return false;
  }
  if (unshare(CLONE_NEWNET | CLONE_NEWNS) != 0) {
    why = std::string("unshare: ") + std::strerror(errno);
    return false;
  }
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    why = "cannot make the mount namespace private";
    return false;
  }
  if (!bring_lo_up() || !run_ip("192.0.2.1/32")) {
    why = "cannot set up lo with 192.0.2.1";
    return false;
  }
  if (!mount_hosts(hosts_file)) {
    why = std::string("cannot bind-mount a private /etc/hosts: ") + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace jail::egress::test
