// Whether a host file is one every user of the host may read. The builder and the checker run as
// root, often, and root reads anything: what a tree brings in by reference, and what `jail rootfs
// check` suggests adding, must not be a file only root (or its owner and group) can read, or a
// root would carry /etc/shadow to whoever runs in it.
#pragma once

#include <sys/stat.h>

#include <filesystem>

namespace jail::rootfs {

namespace host_access_detail {

// Every directory on the way to `path` (not `path` itself) searchable by "other", each looked up
// as the kernel resolves it (a symlinked directory by what it leads to).
inline bool others_may_pass(const std::filesystem::path& path) {
  struct stat info {};
  std::filesystem::path dir = path.root_path();
  if (::stat(dir.c_str(), &info) != 0 || (info.st_mode & S_IXOTH) == 0) return false;
  const std::filesystem::path parent = path.parent_path();
  for (const auto& name : parent.relative_path()) {
    dir /= name;
    if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || (info.st_mode & S_IXOTH) == 0)
      return false;
  }
  return true;
}

}  // namespace host_access_detail

// By the permission bits "other" has, not by access(2) (the caller may be root): each directory
// on the way to `path` searchable, both as `path` names them and with their symlinks resolved;
// `path` readable (a directory also searchable); and when `path` is a symlink, the same of what
// it leads to (a dangling link is only its text). False when any of it cannot be looked at.
// `links` counts the symlinks already followed (for the recursion).
[[nodiscard]] inline bool anyone_may_read(const std::filesystem::path& path, int links = 0) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path absolute = fs::absolute(path, error).lexically_normal();
  if (error) return false;
  if (!absolute.has_relative_path()) return true;  // "/" itself
  const fs::path parent = fs::canonical(absolute.parent_path(), error);
  if (error || !host_access_detail::others_may_pass(absolute) ||
      !host_access_detail::others_may_pass(parent / absolute.filename()))
    return false;
  struct stat info {};
  if (::lstat(absolute.c_str(), &info) != 0) return false;
  if (S_ISLNK(info.st_mode)) {
    const fs::path target = fs::canonical(absolute, error);
    if (error) return true;  // dangling or looping: only its text, which others may read
    // What canonical() gives has no symlinks in it; a second one is a change under way.
    return links == 0 && anyone_may_read(target, links + 1);
  }
  const mode_t wanted = S_ISDIR(info.st_mode) ? (S_IROTH | S_IXOTH) : S_IROTH;
  return (info.st_mode & wanted) == wanted;
}

}  // namespace jail::rootfs
