#include "root_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "rootfs/builder.hpp"

namespace jail::rootfs {
namespace {

namespace fs = std::filesystem;

// The names below the root, in order; "/usr/lib" and "usr/lib" alike. A ".." is refused rather
// than resolved: inside the root it could only mean the root again, which no caller means.
std::vector<std::string> names_in(const fs::path& path) {
  std::vector<std::string> names;
  for (const fs::path& part : path.relative_path().lexically_normal()) {
    const std::string name = part.string();
    if (name.empty() || name == ".") continue;
    if (name == "..") {
      throw BuildError(
          fmt::format("{}: a path in the root may not go up with '..'", path.string()));
    }
    names.push_back(name);
  }
  return names;
}

// A directory keeps its permission bits and the sticky bit, never set-uid or set-gid.
constexpr mode_t kKeptDirectoryBits = 01777;

// The mode of the host's directory at `path` ("./usr/lib": /usr/lib, symlinks followed as the
// host resolves them), which the root's directory there mirrors; 0755 where the host has none.
mode_t host_directory_mode(const std::string& path) {
  struct stat info {};
  const std::string host = "/" + path.substr(std::min<std::size_t>(path.size(), 2));
  if (::stat(host.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return 0755;
  return info.st_mode & kKeptDirectoryBits;
}

}  // namespace

RootDir::RootDir(const fs::path& dir)
    : where_(dir), root_(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) {
  if (!root_.valid()) {
    throw BuildError(fmt::format("cannot open {}: {}", dir.string(), std::strerror(errno)));
  }
}

Fd RootDir::directory(const fs::path& path, std::optional<mode_t> mode) const {
  Fd current(::fcntl(root_.get(), F_DUPFD_CLOEXEC, 0));
  std::string so_far = ".";
  const std::vector<std::string> names = names_in(path);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    so_far += "/" + name;
    Fd next(open_in_root(root_.get(), so_far, O_PATH | O_DIRECTORY));
    if (!next.valid() && errno == ENOENT) {
      const mode_t wanted = (mode && i + 1 == names.size() ? *mode : host_directory_mode(so_far)) &
                            kKeptDirectoryBits;
      // Made in the directory the prefix resolved to; a racing maker is as good as this one.
      // The builder's own until finish_directories, whatever its umask.
      if (::mkdirat(current.get(), name.c_str(), 0700) == 0) {
        if (::fchmodat(current.get(), name.c_str(), wanted | S_IRWXU, 0) != 0) {
          throw BuildError(fmt::format("cannot set the mode of {} in {}: {}", so_far.substr(1),
                                       where_.string(), std::strerror(errno)));
        }
        made_.emplace_back(so_far, wanted);
      } else if (errno != EEXIST) {
        throw BuildError(fmt::format("cannot make {} in {}: {}", so_far.substr(1), where_.string(),
                                     std::strerror(errno)));
      }
      next = Fd(open_in_root(root_.get(), so_far, O_PATH | O_DIRECTORY));
    }
    if (!next.valid()) {
      throw BuildError(fmt::format("cannot use {} in {} as a directory: {}", so_far.substr(1),
                                   where_.string(), std::strerror(errno)));
    }
    current = std::move(next);
  }
  return current;
}

void RootDir::finish_directories() const {
  // The deepest first: a directory closed to the builder is closed after what is below it.
  std::sort(made_.begin(), made_.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [path, mode] : made_) {
    const Fd dir(open_in_root(root_.get(), path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    if (!dir.valid() || ::fchmod(dir.get(), mode) != 0) {
      throw BuildError(fmt::format("cannot set the mode of {} in {}: {}", path.substr(1),
                                   where_.string(), std::strerror(errno)));
    }
  }
  made_.clear();
}

std::pair<Fd, std::string> RootDir::parent_of(const fs::path& path) const {
  std::vector<std::string> names = names_in(path);
  if (names.empty()) {
    throw BuildError(fmt::format("{}: the root itself is not a file's place", path.string()));
  }
  std::string last = std::move(names.back());
  names.pop_back();
  fs::path parent = "/";
  for (const std::string& name : names) parent /= name;
  return {directory(parent), std::move(last)};
}

std::optional<struct stat> RootDir::entry(const fs::path& path) const {
  const std::vector<std::string> names = names_in(path);
  if (names.empty()) return std::nullopt;
  std::string parent = ".";
  for (std::size_t i = 0; i + 1 < names.size(); ++i) parent += "/" + names[i];
  const Fd dir(open_in_root(root_.get(), parent, O_PATH | O_DIRECTORY));
  struct stat info {};
  if (!dir.valid() || ::fstatat(dir.get(), names.back().c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0)
    return std::nullopt;
  return info;
}

void RootDir::remove_non_directory(int parent, const std::string& name,
                                   const fs::path& path) const {
  if (::unlinkat(parent, name.c_str(), 0) == 0 || errno == ENOENT) return;
  throw BuildError(fmt::format("cannot replace {} in {}: {}", path.string(), where_.string(),
                               errno == EISDIR ? "it is a directory" : std::strerror(errno)));
}

void RootDir::symlink(const fs::path& path, const std::string& text) const {
  const auto [parent, name] = parent_of(path);
  remove_non_directory(parent.get(), name, path);
  if (::symlinkat(text.c_str(), parent.get(), name.c_str()) != 0) {
    throw BuildError(fmt::format("cannot make the link {} -> {} in {}: {}", path.string(), text,
                                 where_.string(), std::strerror(errno)));
  }
}

Fd RootDir::create(const fs::path& path, mode_t mode) const {
  const auto [parent, name] = parent_of(path);
  remove_non_directory(parent.get(), name, path);
  Fd file(::openat(parent.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   mode));
  if (!file.valid()) {
    throw BuildError(fmt::format("cannot create {} in {}: {}", path.string(), where_.string(),
                                 std::strerror(errno)));
  }
  return file;
}

void RootDir::remove(const fs::path& path) const {
  const auto [parent, name] = parent_of(path);
  remove_non_directory(parent.get(), name, path);
}

bool RootDir::link(int host_file, const fs::path& path) const {
  const auto [parent, name] = parent_of(path);
  // The open file itself, never a path that may lead elsewhere by now: AT_EMPTY_PATH needs
  // CAP_DAC_READ_SEARCH, the /proc link serves everyone else.
  if (::linkat(host_file, "", parent.get(), name.c_str(), AT_EMPTY_PATH) == 0) return true;
  const std::string proc = "/proc/self/fd/" + std::to_string(host_file);
  return ::linkat(AT_FDCWD, proc.c_str(), parent.get(), name.c_str(), AT_SYMLINK_FOLLOW) == 0;
}

}  // namespace jail::rootfs
