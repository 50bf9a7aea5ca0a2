#include "dry_run/dir_renames.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "dry_run/tree.hpp"
#include "jail/error.hpp"
#include "unique_fd.hpp"

namespace jail::dry_run {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw Error("dry_run", err,
              fmt::format("cannot take in the directory renamed to {}: {}: {}", path, what,
                          std::strerror(err)));
}

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

// overlayfs's marks: trusted.overlay.* where it was mounted in the initial namespace,
// user.overlay.* under userxattr.
constexpr const char* kPrefixes[] = {"trusted.overlay.", "user.overlay."};

struct Redirect {
  std::string prefix;
  std::string target;  // "/a/b" from the layer's root, or a name in the same parent
};

std::optional<Redirect> redirect_of(int dir) {
  for (const char* prefix : kPrefixes) {
    char value[4096];
    const ssize_t n =
        ::fgetxattr(dir, (std::string(prefix) + "redirect").c_str(), value, sizeof value);
    if (n > 0) return Redirect{prefix, std::string(value, static_cast<std::size_t>(n))};
  }
  return std::nullopt;
}

bool is_opaque(int dir) {
  for (const char* prefix : kPrefixes) {
    char value[2] = {};
    if (::fgetxattr(dir, (std::string(prefix) + "opaque").c_str(), value, sizeof value) == 1 &&
        value[0] == 'y')
      return true;
  }
  return false;
}

UniqueFd open_dir_at(int dir, const std::string& name) {
  return UniqueFd(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

// A directory of the lower layer, and its path there (for messages and the rename's record).
struct Lower {
  UniqueFd fd;
  std::string path;
};

class Flattener {
 public:
  explicit Flattener(int lower_root) : lower_root_(lower_root) {}

  // An upper directory that merges with `lower` (fd invalid: with nothing).
  void walk(int upper, const std::string& path, const Lower& lower) {
    for (const std::string& name : names_in(upper)) {
      struct stat info {};
      if (::fstatat(upper, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(info.st_mode))
        continue;
      const UniqueFd sub = open_dir_at(upper, name);
      if (!sub.valid()) fail("cannot open it", join(path, name), errno);
      if (const auto redirect = redirect_of(sub.get())) {
        take_in(sub.get(), join(path, name), origin(*redirect, lower), redirect->prefix);
      } else if (!is_opaque(sub.get()) && lower.fd.valid()) {
        walk(sub.get(), join(path, name), below(lower, name));
      } else {
        walk(sub.get(), join(path, name), Lower{});  // renames may be below it still
      }
    }
  }

  std::vector<DirRename> renames() { return std::move(renames_); }

 private:
  // Where a redirected directory came from, in the lower layer.
  Lower origin(const Redirect& redirect, const Lower& parent) {
    const bool absolute = redirect.target.starts_with('/');
    const std::string path =
        absolute ? redirect.target.substr(1) : join(parent.path, redirect.target);
    if (path.empty() || (!absolute && !parent.fd.valid())) return Lower{UniqueFd(), path};
    // Beneath the layer's root and through no link, whatever the xattr says.
    return Lower{open_beneath(lower_root_, path, O_PATH | O_DIRECTORY), path};
  }

  Lower below(const Lower& lower, const std::string& name) {
    if (!lower.fd.valid()) return Lower{};
    return Lower{open_beneath(lower.fd.get(), name, O_PATH | O_DIRECTORY), join(lower.path, name)};
  }

  // The renamed directory `dir` (at `path` in the layer), or one below it: it comes to hold all
  // it shows. The entries of `lower` it neither has nor hid are copied in; its whiteouts hide
  // nothing once it is opaque and go.
  void take_in(int dir, const std::string& path, const Lower& lower, const std::string& prefix) {
    if (!lower.path.empty() && redirect_of(dir)) renames_.push_back({lower.path, path});
    const std::vector<std::string> names = names_in(dir);
    for (const std::string& name : names) {
      struct stat info {};
      if (::fstatat(dir, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0)
        fail("cannot stat", join(path, name), errno);
      if (S_ISCHR(info.st_mode) && info.st_rdev == makedev(0, 0)) {
        if (::unlinkat(dir, name.c_str(), 0) != 0) fail("cannot remove a whiteout", path, errno);
        continue;
      }
      if (!S_ISDIR(info.st_mode)) continue;
      const UniqueFd sub = open_dir_at(dir, name);
      if (!sub.valid()) fail("cannot open it", join(path, name), errno);
      if (const auto redirect = redirect_of(sub.get())) {
        take_in(sub.get(), join(path, name), origin(*redirect, lower), redirect->prefix);
      } else if (is_opaque(sub.get())) {
        walk(sub.get(), join(path, name), Lower{});
      } else {
        take_in(sub.get(), join(path, name), below(lower, name), prefix);
      }
    }
    if (lower.fd.valid()) {
      for (const std::string& name : names_in(lower.fd.get())) {
        if (std::find(names.begin(), names.end(), name) == names.end())
          copy_at(lower.fd.get(), name, dir, name);
      }
    }
    const std::string opaque = prefix + "opaque";
    if (::fsetxattr(dir, opaque.c_str(), "y", 1, 0) != 0)
      fail("cannot mark it opaque", path, errno);
    if (::fremovexattr(dir, (prefix + "redirect").c_str()) != 0 && errno != ENODATA)
      fail("cannot drop its redirect", path, errno);
  }

  int lower_root_;
  std::vector<DirRename> renames_;
};

}  // namespace

std::vector<DirRename> flatten_dir_renames(int upper, int lower) {
  Flattener flattener(lower);
  Lower root{UniqueFd(::dup(lower)), ""};
  if (!root.fd.valid()) fail("cannot open the host directory", "", errno);
  flattener.walk(upper, "", root);
  return flattener.renames();
}

}  // namespace jail::dry_run
