#include "oci/host_etc.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

#include "unique_fd.hpp"

namespace jail::oci {
namespace {

namespace fs = std::filesystem;

// The source's owner on what was made (a copy is the caller's; a link already is the source's).
bool same_owner(const fs::path& made, const struct stat& source) {
  struct stat info {};
  if (::lstat(made.c_str(), &info) != 0) return false;
  if (info.st_uid == source.st_uid && info.st_gid == source.st_gid) return true;
  return ::lchown(made.c_str(), source.st_uid, source.st_gid) == 0;
}

// A copy with the source's mode (no set-id or sticky bits: a config file needs none) and owner,
// made with a handful of syscalls: a run bundle places a couple of dozen files at each start.
bool copy_file(const fs::path& source, const fs::path& dest, const struct stat& info) {
  const UniqueFd in(::open(source.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!in.valid()) return false;
  const UniqueFd out(::open(dest.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!out.valid()) return false;
  for (off_t copied = 0; copied < info.st_size;) {
    const ssize_t n =
        ::sendfile(out.get(), in.get(), nullptr, static_cast<std::size_t>(info.st_size - copied));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    copied += n;
  }
  return ::fchmod(out.get(), info.st_mode & 0777) == 0 &&
         ::fchown(out.get(), info.st_uid, info.st_gid) == 0;
}

// `same_device`: whether source and dest are on one file system, where a hard link is the
// host's file itself, as a bind shows it (link() does not follow a symlink, and `source` was
// lstat()ed a regular file). Across file systems it could only fail.
bool place_file(const fs::path& source, const fs::path& dest, const struct stat& info,
                bool same_device) {
  if (same_device && ::link(source.c_str(), dest.c_str()) == 0) return true;
  return copy_file(source, dest, info);
}

bool place_dir(const fs::path& dest, const struct stat& info) {
  return ::mkdir(dest.c_str(), 0700) == 0 && ::chmod(dest.c_str(), info.st_mode & 07777) == 0 &&
         same_owner(dest, info);
}

bool place_symlink(const fs::path& source, const fs::path& dest, const struct stat& info) {
  std::error_code error;
  const fs::path target = fs::read_symlink(source, error);
  return !error && ::symlink(target.c_str(), dest.c_str()) == 0 && same_owner(dest, info);
}

// One entry of the tree; `source` is not followed if it is a symlink.
bool place(const fs::path& source, const fs::path& dest, bool same_device) {
  struct stat info {};
  if (::lstat(source.c_str(), &info) != 0) return false;
  if (S_ISREG(info.st_mode)) return place_file(source, dest, info, same_device);
  if (S_ISDIR(info.st_mode)) return place_dir(dest, info);
  if (S_ISLNK(info.st_mode)) return place_symlink(source, dest, info);
  return false;  // a device, socket or FIFO keeps its bind
}

// Appends the entries below the directory open at `dir` (closed here) to `entries` as paths
// under `prefix`, parents before children; false once there are more than kMaxInlinedEntries or
// one cannot be read. The directory is read a few entries at a time, so a big one (/etc/ssl/certs
// holds hundreds) is given up after a small read rather than read whole, as readdir would.
bool list_small_tree(int dir, const fs::path& prefix, std::vector<fs::path>& entries) {
  const UniqueFd owned(dir);
  alignas(8) char buffer[1024];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, dir, buffer, sizeof buffer);
    if (n < 0) return false;
    if (n == 0) return true;
    for (long offset = 0; offset < n;) {
      const auto* entry = reinterpret_cast<const struct dirent64*>(buffer + offset);
      offset += entry->d_reclen;
      const std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      if (entries.size() == kMaxInlinedEntries) return false;
      entries.push_back(prefix / name);
      bool is_dir = entry->d_type == DT_DIR;
      if (entry->d_type == DT_UNKNOWN) {  // a file system that does not give types
        struct stat info {};
        if (::fstatat(dir, entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0) return false;
        is_dir = S_ISDIR(info.st_mode);
      }
      if (!is_dir) continue;
      const int child =
          ::openat(dir, entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child < 0 || !list_small_tree(child, prefix / name, entries)) return false;
    }
  }
}

// The entries below `dir`, parents before children, or nullopt if there are too many or one
// cannot be read. Symlinks to directories are not descended into: they are recreated as links.
std::optional<std::vector<fs::path>> small_tree(const fs::path& dir) {
  std::vector<fs::path> entries;
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || !list_small_tree(fd, dir, entries)) return std::nullopt;
  return entries;
}

}  // namespace

bool inline_host_entry(const fs::path& source, const fs::path& dest) {
  struct stat info {};
  struct stat dest_parent {};
  if (::lstat(source.c_str(), &info) != 0) return false;
  if (::stat(dest.parent_path().c_str(), &dest_parent) != 0) return false;
  const bool same_device = info.st_dev == dest_parent.st_dev;
  bool placed = false;
  if (S_ISREG(info.st_mode)) {
    placed = place_file(source, dest, info, same_device);
  } else if (S_ISDIR(info.st_mode)) {
    if (const auto entries = small_tree(source)) {
      placed = place_dir(dest, info);
      for (std::size_t i = 0; placed && i < entries->size(); ++i) {
        const fs::path& entry = (*entries)[i];
        placed = place(entry, dest / entry.lexically_relative(source), same_device);
      }
    }
  }
  if (!placed) {
    std::error_code ignored;
    fs::remove_all(dest, ignored);
  }
  return placed;
}

}  // namespace jail::oci
