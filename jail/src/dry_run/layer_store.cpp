#include "dry_run/layer_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dry_run/tree.hpp"
#include "jail/error.hpp"
#include "unique_fd.hpp"

namespace jail::dry_run {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw Error(
      "dry_run", err,
      fmt::format("cannot copy the dry run's layer: {} {}: {}", what, path, std::strerror(err)));
}

// Opens `name`; one the tool left without read (or search) permission for its owner is given
// it on the store's side first: the store is the parent's to change and goes after the copy.
UniqueFd open_own(int dir, const std::string& name, int flags, const struct stat& info,
                  const std::string& path) {
  UniqueFd fd(::openat(dir, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid() && errno == EACCES) {
    const mode_t wanted = S_IRUSR | (S_ISDIR(info.st_mode) ? S_IXUSR : 0);
    if (::fchmodat(dir, name.c_str(), (info.st_mode & 07777) | wanted, 0) != 0)
      fail("cannot open", path, EACCES);
    fd = UniqueFd(::openat(dir, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
  }
  if (!fd.valid()) fail("cannot open", path, errno);
  return fd;
}

// overlayfs's marks (user.overlay.* in the tool's namespace, trusted.overlay.* where the parent
// made the overlay: opaque, redirect) and the other user.* xattrs. No other: security.* and the
// rest are not the tool's to set (its filter refuses them).
void copy_xattrs(int from, int to, const std::string& path) {
  std::vector<char> names(4096);
  ssize_t length = 0;
  while ((length = ::flistxattr(from, names.data(), names.size())) < 0 && errno == ERANGE)
    names.resize(names.size() * 4);
  if (length < 0) {
    if (errno == ENOTSUP) return;
    fail("cannot list the xattrs of", path, errno);
  }
  std::vector<char> value(4096);
  for (const char* name = names.data(); name < names.data() + length;
       name += std::strlen(name) + 1) {
    if (std::strncmp(name, "user.", 5) != 0 && std::strncmp(name, "trusted.overlay.", 16) != 0)
      continue;
    ssize_t size = 0;
    while ((size = ::fgetxattr(from, name, value.data(), value.size())) < 0 && errno == ERANGE)
      value.resize(value.size() * 4);
    if (size < 0) fail(fmt::format("cannot read xattr {} of", name), path, errno);
    if (::fsetxattr(to, name, value.data(), static_cast<std::size_t>(size), 0) != 0)
      fail(fmt::format("cannot write xattr {} of", name), path, errno);
  }
}

void keep_times(int fd, const struct stat& info, const std::string& path) {
  const timespec times[2] = {info.st_atim, info.st_mtim};
  if (::futimens(fd, times) != 0) fail("cannot set the times of", path, errno);
}

class LayerCopy {
 public:
  explicit LayerCopy(int to_root) : to_root_(to_root) {}

  void directory(int from, int to, const std::string& prefix) {
    for (const std::string& name : names_in(from)) {
      struct stat info {};
      const std::string path = prefix + name;
      if (::fstatat(from, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0)
        fail("cannot stat", path, errno);
      entry(from, to, name, path, info);
    }
  }

 private:
  void entry(int from, int to, const std::string& name, const std::string& path,
             const struct stat& info) {
    const char* leaf = name.c_str();
    switch (info.st_mode & S_IFMT) {
      case S_IFDIR: {
        if (::mkdirat(to, leaf, 0700) != 0) fail("cannot create", path, errno);
        const UniqueFd source = open_own(from, name, O_RDONLY | O_DIRECTORY, info, path);
        const UniqueFd target(::openat(to, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!target.valid()) fail("cannot open", path, errno);
        directory(source.get(), target.get(), path + "/");
        copy_xattrs(source.get(), target.get(), path);
        // After the content: a mode without write permission would have refused it.
        if (::fchmod(target.get(), info.st_mode & 07777) != 0) fail("cannot chmod", path, errno);
        keep_times(target.get(), info, path);
        return;
      }
      case S_IFREG:
        file(from, to, name, path, info);
        return;
      case S_IFLNK: {
        if (::symlinkat(read_link_at(from, name).c_str(), to, leaf) != 0)
          fail("cannot create", path, errno);
        const timespec times[2] = {info.st_atim, info.st_mtim};
        (void)::utimensat(to, leaf, times, AT_SYMLINK_NOFOLLOW);
        return;
      }
      case S_IFCHR:
        // overlayfs's whiteout: a 0/0 character device, which the kernel lets anyone make.
        if (info.st_rdev != makedev(0, 0)) break;
        [[fallthrough]];
      case S_IFIFO:
      case S_IFSOCK:
        if (::mknodat(to, leaf, info.st_mode, info.st_rdev) != 0)
          fail("cannot create", path, errno);
        return;
      default:
        break;
    }
    fail(
        "refusing to copy an entry that is not a file, directory, symlink, whiteout, fifo or "
        "socket:",
        path, EPERM);
  }

  void file(int from, int to, const std::string& name, const std::string& path,
            const struct stat& info) {
    if (info.st_nlink > 1) {
      const auto [first, added] = linked_.try_emplace({info.st_dev, info.st_ino}, path);
      if (!added) {
        if (::linkat(to_root_, first->second.c_str(), to, name.c_str(), 0) != 0)
          fail("cannot link", path, errno);
        return;
      }
    }
    const UniqueFd in = open_own(from, name, O_RDONLY, info, path);
    const UniqueFd out(
        ::openat(to, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!out.valid()) fail("cannot create", path, errno);
    copy_bytes(in.get(), out.get(), path);
    copy_xattrs(in.get(), out.get(), path);
    if (::fchmod(out.get(), info.st_mode & 07777) != 0) fail("cannot chmod", path, errno);
    keep_times(out.get(), info, path);
  }

  int to_root_;
  // A file with more than one name: its first name, relative to the layer's root.
  std::map<std::pair<dev_t, ino_t>, std::string> linked_;
};

}  // namespace

std::string store_upper_name(std::size_t layer) {
  return fmt::format("upper-{}", layer);
}
std::string store_work_name(std::size_t layer) {
  return fmt::format("work-{}", layer);
}

void copy_layer(int from, int to) {
  LayerCopy copy(to);
  copy.directory(from, to, "");
}

StoreUse store_use(int store) {
  struct statfs fs {};
  StoreUse use;
  if (::fstatfs(store, &fs) != 0) return use;
  const std::uint64_t block = fs.f_bsize;
  use.size_bytes = fs.f_blocks * block;
  use.used_bytes = (fs.f_blocks - fs.f_bfree) * block;
  use.full = fs.f_bavail * block < 64 * 1024 || fs.f_ffree == 0;
  return use;
}

}  // namespace jail::dry_run
