// Helpers for the cgroup tests that run real processes in real cgroups: a forked child that
// waits for a go signal (as the launcher's child waits on the handshake), and a count of the
// cgroups jail left behind.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "../../jail/src/cgroup/cgroup.hpp"
#include "../../jail/src/cgroup/files.hpp"
#include "../support/time_scale.hpp"

namespace jail::cgroup::testing {

// A forked child that runs `body` only after go(). Killed (by its pid) and reaped on
// destruction if the test did not wait for it.
class Child {
 public:
  explicit Child(std::function<int(int out_fd)> body) {
    int go[2], out[2];
    if (::pipe2(go, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      ::close(go[1]);
      ::close(out[0]);
      char c;
      if (::read(go[0], &c, 1) != 1) ::_exit(99);  // the test gave up before go()
      // Never let an exception climb back into the test runner of the forked copy.
      int code = 97;
      try {
        code = body(out[1]);
      } catch (const std::exception& e) {
        ::dprintf(out[1], "exception: %s\n", e.what());
        code = 98;
      } catch (...) {
        code = 98;
      }
      ::_exit(code);
    }
    ::close(go[0]);
    ::close(out[1]);
    go_ = go[1];
    out_ = out[0];
  }
  ~Child() {
    if (go_ >= 0) ::close(go_);
    if (out_ >= 0) ::close(out_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  void go() {
    (void)!::write(go_, "g", 1);
    ::close(go_);
    go_ = -1;
  }
  // Reads what the child wrote to out_fd until it closes it (or exits).
  std::string output() {
    std::string s;
    char buf[256];
    ssize_t n;
    while ((n = ::read(out_, buf, sizeof buf)) > 0) s.append(buf, static_cast<size_t>(n));
    return s;
  }
  // Reads one line the child wrote.
  std::string line() {
    std::string s;
    char c;
    while (::read(out_, &c, 1) == 1 && c != '\n') s += c;
    return s;
  }
  // waitpid status; -1 if it did not end within `limit` (scaled: ../support/time_scale.hpp).
  int wait(std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + jail_test::scaled(limit);
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int go_ = -1;
  int out_ = -1;
};

// The v2 cgroup path of `pid` ("0::" line of /proc/<pid>/cgroup).
inline std::string cgroup_of(pid_t pid) {
  const auto text = files::read("/proc/" + std::to_string(pid) + "/cgroup").value_or("");
  const size_t at = text.find("0::");
  if (at == std::string::npos) return {};
  return text.substr(at + 3, text.find('\n', at) - at - 3);
}

// The directories where jail creates its cgroups for this process: the caller's own cgroup in
// every hierarchy.
inline std::vector<std::string> own_dirs(const Layout& layout) {
  std::vector<std::string> out;
  for (const auto& h : layout.v1) {
    if (!h.own_dir.empty()) out.push_back(h.own_dir);
  }
  if (layout.v2 && !layout.v2->own_dir.empty()) out.push_back(layout.v2->own_dir);
  return out;
}

// The cgroups this test process made (jail-<pid>-*, jail-supervisor-<pid>) under those
// directories, by path. Other jail processes running at the same time are not counted.
inline std::vector<std::string> jail_cgroups(const Layout& layout) {
  const std::string pid = std::to_string(::getpid());
  std::vector<std::string> out;
  for (const auto& dir : own_dirs(layout)) {
    for (const auto& name : files::subdirs(dir, "jail-" + pid + "-")) {
      out.push_back(dir + "/" + name);
    }
    for (const auto& name : files::subdirs(dir, "jail-supervisor-" + pid)) {
      out.push_back(dir + "/" + name);
    }
  }
  return out;
}

}  // namespace jail::cgroup::testing
