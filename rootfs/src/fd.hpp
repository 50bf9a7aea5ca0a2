// Descriptors for the rootfs builder and checker (rootfs has none of libjail's helpers): an
// owned fd, and a lookup inside a root as the tool there would make it.
#pragma once

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <utility>

namespace jail::rootfs {

// An owned file descriptor, closed once.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = other.release();
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const { return fd_; }
  [[nodiscard]] bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

// `path` opened below the directory `root` with `flags` (O_CLOEXEC added): '/', '..' and
// absolute symlinks stop at `root`, as they do for a tool after pivot_root. -1 and errno on
// failure.
inline int open_in_root(int root, const std::string& path, std::uint64_t flags) {
  open_how how{};
  how.flags = flags | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, root, path.c_str(), &how, sizeof how));
}

// `path` opened below the directory `dir` with `flags` (O_CLOEXEC and O_NOFOLLOW added) without
// passing any symlink: not one on the way (ELOOP), not '..' above `dir` nor an absolute path
// (EXDEV). A final symlink is opened itself only with O_PATH; otherwise ELOOP. -1 and errno on
// failure. How a tree is read: nothing a link in it names is ever opened.
inline int open_beneath(int dir, const std::string& path, std::uint64_t flags) {
  open_how how{};
  how.flags = flags | O_CLOEXEC | O_NOFOLLOW;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, dir, path.c_str(), &how, sizeof how));
}

}  // namespace jail::rootfs
