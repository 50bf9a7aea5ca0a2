#include "io_spawn.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "../support/time_scale.hpp"

extern char** environ;

namespace jail_test::io {

using Clock = std::chrono::steady_clock;

Pipe::Pipe() {
  if (::pipe2(fds_, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "pipe2");
}

Pipe::~Pipe() {
  close_read();
  close_write();
}

void Pipe::close_read() {
  if (fds_[0] >= 0) ::close(fds_[0]);
  fds_[0] = -1;
}

void Pipe::close_write() {
  if (fds_[1] >= 0) ::close(fds_[1]);
  fds_[1] = -1;
}

bool Exit::exited_with(int code) const {
  return WIFEXITED(status) && WEXITSTATUS(status) == code;
}

std::string Exit::text() const {
  if (WIFEXITED(status)) return "exited " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

Spawned::Spawned(const std::vector<std::string>& args, Caller caller, const std::string& cwd,
                 const Redirects& redirects) {
  // Everything the child needs is prepared before fork.
  std::vector<std::string> storage{JAIL_BINARY};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) throw std::system_error(errno, std::generic_category(), "open /dev/null");
  const int sources[3] = {redirects.in >= 0 ? redirects.in : null_fd,
                          redirects.out >= 0 ? redirects.out : null_fd,
                          redirects.err >= 0 ? redirects.err : null_fd};
  const bool drop = caller == Caller::unprivileged;

  pid_ = ::fork();
  if (pid_ < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid_ == 0) {
    // Only async-signal-safe calls until exec. Every source moves above 100 first, so that no
    // dup2 below overwrites a source still to be used.
    int high[4];
    for (int i = 0; i < 3; ++i) {
      high[i] = ::fcntl(sources[i], F_DUPFD_CLOEXEC, 100);
      if (high[i] < 0) ::_exit(120);
    }
    high[3] = redirects.extra ? ::fcntl(redirects.extra->fd, F_DUPFD_CLOEXEC, 100) : -1;
    for (int i = 0; i < 3; ++i) {
      if (::dup2(high[i], i) != i) ::_exit(120);
    }
    if (redirects.extra && ::dup2(high[3], redirects.extra->as) != redirects.extra->as)
      ::_exit(120);
    if (::chdir(cwd.c_str()) != 0) ::_exit(120);
    if (drop &&
        (::setgroups(0, nullptr) != 0 || ::setresgid(kNobodyGid, kNobodyGid, kNobodyGid) != 0 ||
         ::setresuid(kNobodyUid, kNobodyUid, kNobodyUid) != 0)) {
      ::_exit(121);
    }
    ::execve(argv[0], argv.data(), environ);
    ::_exit(122);
  }
  ::close(null_fd);
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  if (pidfd_ < 0) throw std::system_error(errno, std::generic_category(), "pidfd_open");
}

Spawned::~Spawned() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    try {
      (void)remove_cgroups_left_by(pid_);
    } catch (...) {  // a destructor: whatever is left, the next jail removes a minute later
    }
  }
  if (pidfd_ >= 0) ::close(pidfd_);
}

bool Spawned::ended() const {
  pollfd p{pidfd_, POLLIN, 0};
  return reaped_ || ::poll(&p, 1, 0) == 1;
}

std::optional<Exit> Spawned::wait(std::chrono::milliseconds timeout) {
  if (reaped_) return std::nullopt;
  pollfd p{pidfd_, POLLIN, 0};
  int ready;
  do {
    ready = ::poll(&p, 1, static_cast<int>(scaled(timeout).count()));
  } while (ready < 0 && errno == EINTR);
  if (ready != 1) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    reaped_ = true;
    (void)remove_cgroups_left_by(pid_);
    return std::nullopt;
  }
  Exit exit;
  while (::wait4(pid_, &exit.status, 0, &exit.usage) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  return exit;
}

void Spawned::kill(int signal) {
  if (!reaped_) ::kill(pid_, signal);
}

ScratchFile::ScratchFile(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "open " + path_);
}

ScratchFile::~ScratchFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string ScratchFile::contents() const {
  return read_file(path_).value_or("");
}

bool read_to_end(int fd, std::string& sink, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + scaled(timeout);
  char buf[65536];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready <= 0) continue;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    sink.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace jail_test::io
