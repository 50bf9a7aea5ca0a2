#include "oci/host_etc.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <system_error>
#include <vector>

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

bool place_file(const fs::path& source, const fs::path& dest, const struct stat& info) {
  // link() does not follow a symlink, and `source` was lstat()ed a regular file: the link is the
  // host's file itself, as a bind shows it.
  if (::link(source.c_str(), dest.c_str()) == 0) return true;
  std::error_code error;
  if (!fs::copy_file(source, dest, error) || error) return false;
  // No set-id or sticky bits on a copy: a config file needs none.
  return ::chmod(dest.c_str(), info.st_mode & 0777) == 0 && same_owner(dest, info);
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
bool place(const fs::path& source, const fs::path& dest) {
  struct stat info {};
  if (::lstat(source.c_str(), &info) != 0) return false;
  if (S_ISREG(info.st_mode)) return place_file(source, dest, info);
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
  if (::lstat(source.c_str(), &info) != 0) return false;
  bool placed = false;
  if (S_ISREG(info.st_mode)) {
    placed = place_file(source, dest, info);
  } else if (S_ISDIR(info.st_mode)) {
    const std::vector<fs::path> entries = small_tree(source);
    std::error_code error;
    const bool empty = fs::is_empty(source, error);
    if (!error && (empty || !entries.empty())) {
      placed = place_dir(dest, info);
      for (std::size_t i = 0; placed && i < entries.size(); ++i) {
        placed = place(entries[i], dest / entries[i].lexically_relative(source));
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
