#include "oci/host_etc.hpp"

#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

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

// The entries below `dir`, parents before children, or nothing if there are too many or one
// cannot be read.
std::vector<fs::path> small_tree(const fs::path& dir) {
  std::vector<fs::path> entries;
  std::error_code error;
  // Does not descend into symlinks to directories: they are recreated as symlinks.
  for (fs::recursive_directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    if (entries.size() == kMaxInlinedEntries) return {};
    entries.push_back(it->path());
  }
  if (error) return {};
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
    const std::vector<fs::path> entries = small_tree(source);
    std::error_code error;
    const bool empty = fs::is_empty(source, error);
    if (!error && (empty || !entries.empty())) {
      placed = place_dir(dest, info);
      for (std::size_t i = 0; placed && i < entries.size(); ++i) {
        placed = place(entries[i], dest / entries[i].lexically_relative(source), same_device);
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
