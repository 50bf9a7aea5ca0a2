#include "seccomp/tool_memory.hpp"

#include <fcntl.h>
#include <linux/limits.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>

namespace jail {

// Read a page at a time: process_vm_readv fails a whole transfer that touches an
// unmapped page, and the string may end just before one.
std::optional<std::string> read_string(pid_t pid, std::uint64_t address) {
  static const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  std::array<char, PATH_MAX> buffer;
  std::size_t have = 0;
  while (have < buffer.size()) {
    const std::uint64_t at = address + have;
    const std::size_t want = std::min<std::uint64_t>(page - at % page, buffer.size() - have);
    iovec local{buffer.data() + have, want};
    iovec remote{reinterpret_cast<void*>(at), want};
    const ssize_t got = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got <= 0) return std::nullopt;
    const char* end = static_cast<const char*>(
        std::memchr(buffer.data() + have, 0, static_cast<std::size_t>(got)));
    if (end != nullptr)
      return std::string(buffer.data(), static_cast<std::size_t>(end - buffer.data()));
    have += static_cast<std::size_t>(got);
  }
  return std::nullopt;  // longer than PATH_MAX: the kernel fails it with ENAMETOOLONG
}

// The kernel prints the link relative to the tool's root.
std::optional<std::string> read_proc_link(pid_t pid, const std::string& name) {
  std::array<char, PATH_MAX> buffer;
  const std::string link = "/proc/" + std::to_string(pid) + "/" + name;
  const ssize_t length = ::readlink(link.c_str(), buffer.data(), buffer.size());
  if (length <= 0 || static_cast<std::size_t>(length) >= buffer.size() || buffer[0] != '/') {
    return std::nullopt;  // gone, or not a directory in the filesystem (a pipe, a socket)
  }
  return std::string(buffer.data(), static_cast<std::size_t>(length));
}

std::optional<std::string> path_argument(pid_t pid, std::uint64_t address, int dirfd) {
  std::optional<std::string> path = read_string(pid, address);
  if (!path || path->empty()) return path;
  if (path->front() != '/') {
    const auto base =
        read_proc_link(pid, dirfd == AT_FDCWD ? "cwd" : "fd/" + std::to_string(dirfd));
    if (!base) return std::nullopt;
    *path = *base + "/" + *path;
  }
  std::string normal = std::filesystem::path(*path).lexically_normal().string();
  if (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

}  // namespace jail
