// Starting the real jail binary with descriptors of the test's choosing (pipes it feeds and
// drains itself, files, an extra fd), for the I/O tests that stream more than fits in memory or
// watch jail while it runs. run_jail.hpp covers the simple cases.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "run_jail.hpp"

namespace jail_test::io {

// A pipe, both ends O_CLOEXEC, closed when it goes.
class Pipe {
 public:
  Pipe();
  ~Pipe();
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  [[nodiscard]] int read_end() const { return fds_[0]; }
  [[nodiscard]] int write_end() const { return fds_[1]; }
  void close_read();
  void close_write();

 private:
  int fds_[2];
};

// What jail's stdin/stdout/stderr are: a descriptor of the test's, or /dev/null when -1.
struct Redirects {
  int in = -1;
  int out = -1;
  int err = -1;
  std::optional<ExtraFd> extra;  // one more descriptor, at a chosen number
};

struct Exit {
  int status = 0;  // as from waitpid
  rusage usage{};  // jail and every process it reaped (wait4)
  [[nodiscard]] bool exited_with(int code) const;
  [[nodiscard]] std::string text() const;  // "exited 3" / "killed by signal 9"
};

// A jail started as `caller` in `cwd`. The destructor SIGKILLs and reaps it if still running, and
// removes the cgroups that left behind (so does wait() when it kills at its deadline).
class Spawned {
 public:
  Spawned(const std::vector<std::string>& args, Caller caller, const std::string& cwd,
          const Redirects& redirects);
  ~Spawned();
  Spawned(const Spawned&) = delete;
  Spawned& operator=(const Spawned&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  // Whether jail has ended (not yet reaped: its /proc entry is a zombie's).
  [[nodiscard]] bool ended() const;
  // jail's exit, or nullopt if it was still running at the deadline (it is then killed). Here and
  // in read_to_end the timeout is stretched by JAIL_TEST_TIME_SCALE (../support/time_scale.hpp).
  std::optional<Exit> wait(std::chrono::milliseconds timeout);
  void kill(int signal);

 private:
  pid_t pid_ = -1;
  int pidfd_ = -1;
  bool reaped_ = false;
};

// A file in `dir` opened for reading and writing, for a stderr or a log fd; closed when it goes.
class ScratchFile {
 public:
  explicit ScratchFile(std::string path);
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] std::string contents() const;

 private:
  std::string path_;
  int fd_ = -1;
};

// Reads `fd` until end of file or the deadline; false on the deadline.
bool read_to_end(int fd, std::string& sink, std::chrono::milliseconds timeout);

}  // namespace jail_test::io
