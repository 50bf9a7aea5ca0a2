#include "oci/host_etc.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string_view>
#include <system_error>

#include "dry_run/tree.hpp"
#include "jail/error.hpp"
#include "unique_fd.hpp"

namespace jail::oci {
namespace {

namespace fs = std::filesystem;

// Counts the entries below the directory open at `dir` (closed here) into `count`; false once
// there are more than kMaxInlinedEntries or one cannot be read. The directory is read a few
// entries at a time, so a big one (/etc/ssl/certs holds hundreds) is given up after a small
// read rather than read whole, as readdir would. Symlinks to directories are not descended
// into: they are recreated as links.
bool small_tree(int dir, std::size_t& count) {
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
      if (++count > kMaxInlinedEntries) return false;
      bool is_dir = entry->d_type == DT_DIR;
      if (entry->d_type == DT_UNKNOWN) {  // a file system that does not give types
        struct stat info {};
        if (::fstatat(dir, entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0) return false;
        is_dir = S_ISDIR(info.st_mode);
      }
      if (!is_dir) continue;
      const int child =
          ::openat(dir, entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child < 0 || !small_tree(child, count)) return false;
    }
  }
}

}  // namespace

bool inline_host_entry(const fs::path& source, const fs::path& dest) {
  struct stat info {};
  if (::lstat(source.c_str(), &info) != 0) return false;
  if (S_ISDIR(info.st_mode)) {
    std::size_t count = 0;
    const int dir = ::open(source.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0 || !small_tree(dir, count)) return false;
  } else if (!S_ISREG(info.st_mode)) {
    return false;  // a symlink or a special file keeps its bind
  }
  // The dry run's copy: modes, owners (as root), symlinks as symlinks, nothing followed, and a
  // device, socket or FIFO refused.
  try {
    const UniqueFd from = dry_run::open_directory(source.parent_path());
    const UniqueFd to = dry_run::open_directory(dest.parent_path());
    dry_run::copy_at(from.get(), source.filename(), to.get(), dest.filename());
    return true;
  } catch (const Error&) {
    std::error_code ignored;
    fs::remove_all(dest, ignored);
    return false;
  }
}

}  // namespace jail::oci
