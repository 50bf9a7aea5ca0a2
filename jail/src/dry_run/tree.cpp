#include "dry_run/tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "dry_run/digest.hpp"
#include "jail/error.hpp"
#include "write_all.hpp"

namespace jail::dry_run {
namespace {

[[noreturn]] void fail(const std::string& what, int err) {
  throw Error("dry_run", err, fmt::format("{}: {}", what, std::strerror(err)));
}

bool plain_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

// A second name for a regular file, where the kernel allows it (same filesystem, and
// protected_hardlinks satisfied); false for anything else, which is then copied.
bool link_file_at(int from, const std::string& name, int to, const std::string& to_name) {
  struct stat info {};
  return ::fstatat(from, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(info.st_mode) &&
         ::linkat(from, name.c_str(), to, to_name.c_str(), 0) == 0;
}

// The modification time of `info`, set on `name` in `dir` (not following a link).
void keep_mtime(int dir, const char* name, const struct stat& info) {
  const timespec times[2] = {{0, UTIME_OMIT}, info.st_mtim};
  (void)::utimensat(dir, name, times, AT_SYMLINK_NOFOLLOW);
}

}  // namespace

std::vector<std::string> names_in(int dir) {
  const int fd = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("cannot list a directory", errno);
  DIR* stream = ::fdopendir(fd);
  if (stream == nullptr) {
    const int err = errno;
    ::close(fd);
    fail("cannot list a directory", err);
  }
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(stream)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(stream);
  return names;
}

void copy_bytes(int from, int to, const std::string& what) {
  struct stat info {};
  if (::fstat(from, &info) != 0) fail("cannot stat " + what, errno);
  const off_t size = info.st_size;
  std::vector<char> buffer(1 << 16);
  off_t at = 0;
  while (at < size) {
    off_t data = ::lseek(from, at, SEEK_DATA);
    if (data < 0 && errno == ENXIO) break;  // only a hole is left
    if (data < 0) data = at;                // no SEEK_DATA here: copy everything
    off_t hole = ::lseek(from, data, SEEK_HOLE);
    if (hole < 0) hole = size;
    for (off_t offset = data; offset < hole;) {
      const auto want = static_cast<std::size_t>(
          std::min<off_t>(static_cast<off_t>(buffer.size()), hole - offset));
      const ssize_t n = ::pread(from, buffer.data(), want, offset);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("cannot read " + what, errno);
      if (n == 0) break;  // shorter than it was: the end
      for (std::size_t done = 0; done < static_cast<std::size_t>(n);) {
        const ssize_t m = ::pwrite(to, buffer.data() + done, static_cast<std::size_t>(n) - done,
                                   offset + static_cast<off_t>(done));
        if (m < 0 && errno == EINTR) continue;
        if (m <= 0) fail("cannot write " + what, m < 0 ? errno : EIO);
        done += static_cast<std::size_t>(m);
      }
      offset += n;
    }
    at = hole;
  }
  if (::ftruncate(to, size) != 0) fail("cannot write " + what, errno);
}

UniqueFd open_directory(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) fail("cannot open the directory " + path, errno);
  return fd;
}

UniqueFd open_layer_root(const std::string& host_dir) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(O_PATH | O_DIRECTORY | O_CLOEXEC);
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;  // the last component too: ELOOP
  return UniqueFd(
      static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, host_dir.c_str(), &how, sizeof how)));
}

UniqueFd open_layer_root_or_throw(const std::string& host_dir) {
  UniqueFd fd = open_layer_root(host_dir);
  if (fd.valid()) return fd;
  const int err = errno;
  throw Error("dry_run", err,
              fmt::format("cannot open the directory {}: {}{}", host_dir, std::strerror(err),
                          err == ELOOP ? " (a symlink on the way now, where the dry run recorded "
                                         "a directory: jail never writes through one)"
                                       : ""));
}

UniqueFd open_beneath(int root, const std::string& relative, int flags) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC | O_NOFOLLOW);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const char* path = relative.empty() ? "." : relative.c_str();
  return UniqueFd(static_cast<int>(::syscall(SYS_openat2, root, path, &how, sizeof how)));
}

Leaf open_leaf(int root, const std::string& relative, const std::string& shown) {
  const auto slash = relative.rfind('/');
  Leaf leaf;
  leaf.name = slash == std::string::npos ? relative : relative.substr(slash + 1);
  if (!plain_name(leaf.name)) {
    throw Error("dry_run", EINVAL, fmt::format("refusing the path {}: not a plain name", shown));
  }
  const std::string parent = slash == std::string::npos ? "" : relative.substr(0, slash);
  leaf.parent = open_beneath(root, parent, O_PATH | O_DIRECTORY);
  if (!leaf.parent.valid()) {
    const int err = errno;
    throw Error("dry_run", err,
                fmt::format("cannot reach the directory of {}: {}{}", shown, std::strerror(err),
                            err == ELOOP || err == EXDEV
                                ? " (a symlink on the way: jail never writes through one)"
                                : ""));
  }
  return leaf;
}

EntryType type_of(mode_t mode) {
  if (S_ISREG(mode)) return EntryType::file;
  if (S_ISDIR(mode)) return EntryType::directory;
  if (S_ISLNK(mode)) return EntryType::symlink;
  return EntryType::special;
}

HostState state_of(const struct stat& info) {
  HostState state;
  state.exists = true;
  state.type = type_of(info.st_mode);
  state.size = static_cast<std::uint64_t>(info.st_size);
  state.mode = info.st_mode & 07777;
  state.mtime_ns =
      static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
  return state;
}

HostState state_at(int dir, const std::string& name, bool hash) {
  struct stat info {};
  if (::fstatat(dir, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return HostState{};
    fail("cannot stat " + name, errno);
  }
  HostState state = state_of(info);
  if (!hash) return state;
  if (state.type == EntryType::symlink) {
    state.sha256 = sha256_of_text(read_link_at(dir, name));
  } else if (state.type == EntryType::file) {
    const UniqueFd fd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) fail("cannot open " + name, errno);
    state.sha256 = sha256_of_fd(fd.get(), name);
  }
  return state;
}

std::string read_link_at(int dir, const std::string& name) {
  std::string target(4096, '\0');
  const ssize_t n = ::readlinkat(dir, name.c_str(), target.data(), target.size());
  if (n < 0) fail("cannot read the symlink " + name, errno);
  target.resize(static_cast<std::size_t>(n));
  return target;
}

void remove_at(int dir, const std::string& name) {
  if (::unlinkat(dir, name.c_str(), 0) == 0 || errno == ENOENT) return;
  if (errno != EISDIR) fail("cannot remove " + name, errno);
  const UniqueFd child = open_beneath(dir, name, O_PATH | O_DIRECTORY);
  if (!child.valid()) fail("cannot open " + name, errno);
  // A directory left by overlayfs (its work dir) may have no permissions at all.
  ::fchmodat(dir, name.c_str(), 0700, AT_SYMLINK_NOFOLLOW);
  for (const std::string& entry : names_in(child.get())) remove_at(child.get(), entry);
  if (::unlinkat(dir, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    fail("cannot remove " + name, errno);
  }
}

void copy_at(int from, const std::string& name, int to, const std::string& to_name) {
  struct stat info {};
  if (::fstatat(from, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0)
    fail("cannot stat " + name, errno);
  const bool root = ::geteuid() == 0;
  if (S_ISLNK(info.st_mode)) {
    if (::symlinkat(read_link_at(from, name).c_str(), to, to_name.c_str()) != 0) {
      fail("cannot create the symlink " + to_name, errno);
    }
    if (root) ::fchownat(to, to_name.c_str(), info.st_uid, info.st_gid, AT_SYMLINK_NOFOLLOW);
  } else if (S_ISDIR(info.st_mode)) {
    if (::mkdirat(to, to_name.c_str(), 0700) != 0) fail("cannot create " + to_name, errno);
    const UniqueFd source = open_beneath(from, name, O_PATH | O_DIRECTORY);
    const UniqueFd target = open_beneath(to, to_name, O_PATH | O_DIRECTORY);
    if (!source.valid() || !target.valid()) fail("cannot open " + name, errno);
    for (const std::string& entry : names_in(source.get()))
      copy_at(source.get(), entry, target.get(), entry);
    if (root) ::fchownat(to, to_name.c_str(), info.st_uid, info.st_gid, AT_SYMLINK_NOFOLLOW);
    if (::fchmodat(to, to_name.c_str(), info.st_mode & 07777, 0) != 0)
      fail("cannot chmod " + to_name, errno);
  } else if (S_ISREG(info.st_mode)) {
    const UniqueFd in(::openat(from, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!in.valid()) fail("cannot open " + name, errno);
    const UniqueFd out(
        ::openat(to, to_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!out.valid()) fail("cannot create " + to_name, errno);
    copy_bytes(in.get(), out.get(), name);
    if (root) ::fchown(out.get(), info.st_uid, info.st_gid);
    if (::fchmod(out.get(), info.st_mode & 07777) != 0) fail("cannot chmod " + to_name, errno);
  } else {
    throw Error("dry_run", EPERM,
                fmt::format("refusing to copy {}: not a file, directory or symlink", name));
  }
  // Last, after a directory's content: a copy (a backup, or what undo puts back) keeps the time
  // its original had.
  keep_mtime(to, to_name.c_str(), info);
}

void copy_whole_at(int from, const std::string& name, int to, const std::string& to_name) {
  const std::string partial = to_name + ".partial";  // in a fresh directory: never there yet
  copy_at(from, name, to, partial);
  if (::renameat(to, partial.c_str(), to, to_name.c_str()) != 0)
    fail("cannot rename " + partial, errno);
}

void keep_at(int from, const std::string& name, int to, const std::string& to_name) {
  if (!link_file_at(from, name, to, to_name)) copy_whole_at(from, name, to, to_name);
}

void restore_at(int from, const std::string& name, int to, const std::string& to_name) {
  if (!link_file_at(from, name, to, to_name)) copy_at(from, name, to, to_name);
}

void replace_file_at(int dir, const std::string& name, int source, mode_t mode,
                     const struct stat* owner, const std::string& temporary) {
  const UniqueFd out(
      ::openat(dir, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!out.valid()) fail("cannot create a temporary file beside " + name, errno);
  try {
    copy_bytes(source, out.get(), name);
    if (owner != nullptr && ::geteuid() == 0 &&
        ::fchown(out.get(), owner->st_uid, owner->st_gid) != 0) {
      fail("cannot set the owner of " + name, errno);
    }
    if (::fchmod(out.get(), mode & 07777) != 0) fail("cannot chmod " + name, errno);
    if (::renameat(dir, temporary.c_str(), dir, name.c_str()) != 0)
      fail("cannot rename over " + name, errno);
  } catch (...) {
    ::unlinkat(dir, temporary.c_str(), 0);
    throw;
  }
}

void replace_symlink_at(int dir, const std::string& name, const std::string& target,
                        const std::string& temporary) {
  if (::symlinkat(target.c_str(), dir, temporary.c_str()) != 0) {
    fail("cannot create a symlink beside " + name, errno);
  }
  if (::renameat(dir, temporary.c_str(), dir, name.c_str()) != 0) {
    const int err = errno;
    ::unlinkat(dir, temporary.c_str(), 0);
    fail("cannot rename over " + name, err);
  }
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".new";
  const int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && write_all(fd, text.data(), text.size()) && ::fsync(fd) == 0;
  const int err = errno;
  if (fd >= 0) ::close(fd);
  ok = ok && ::rename(temporary.c_str(), path.c_str()) == 0;
  if (!ok) {
    throw Error("dry_run", err, fmt::format("cannot write {}: {}", path, std::strerror(err)));
  }
}

void list_tree(int dir, const std::string& prefix, std::vector<std::string>& out) {
  for (const std::string& name : names_in(dir)) {
    const std::string path = prefix.empty() ? name : prefix + "/" + name;
    out.push_back(path);
    struct stat info {};
    if (::fstatat(dir, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(info.st_mode))
      continue;
    const UniqueFd child = open_beneath(dir, name, O_PATH | O_DIRECTORY);
    if (child.valid()) list_tree(child.get(), path, out);
  }
}

std::uint64_t tree_size(const std::string& path) {
  std::uint64_t total = 0;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(
           path, std::filesystem::directory_options::skip_permission_denied, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_regular_file(error) && !it->is_symlink(error)) total += it->file_size(error);
  }
  return total;
}

}  // namespace jail::dry_run
