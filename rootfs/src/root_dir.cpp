#include "root_dir.hpp"

#include <fcntl.h>
#include <unistd.h>

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

}  // namespace

RootDir::RootDir(const fs::path& dir)
    : where_(dir), root_(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) {
  if (!root_.valid()) {
    throw BuildError(fmt::format("cannot open {}: {}", dir.string(), std::strerror(errno)));
  }
}

Fd RootDir::directory(const fs::path& path) const {
  Fd current(::fcntl(root_.get(), F_DUPFD_CLOEXEC, 0));
  std::string so_far = ".";
  for (const std::string& name : names_in(path)) {
    so_far += "/" + name;
    Fd next(open_in_root(root_.get(), so_far, O_PATH | O_DIRECTORY));
    if (!next.valid() && errno == ENOENT) {
      // Made in the directory the prefix resolved to; a racing maker is as good as this one.
      if (::mkdirat(current.get(), name.c_str(), 0755) != 0 && errno != EEXIST) {
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

bool RootDir::link(const fs::path& host_file, const fs::path& path) const {
  const auto [parent, name] = parent_of(path);
  return ::linkat(AT_FDCWD, host_file.c_str(), parent.get(), name.c_str(), 0) == 0;
}

}  // namespace jail::rootfs
