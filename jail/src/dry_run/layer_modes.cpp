#include "dry_run/layer_modes.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dry_run/manifest.hpp"
#include "dry_run/tree.hpp"
#include "jail/byte_text.hpp"
#include "jail/error.hpp"

namespace jail::dry_run {
namespace {

std::string modes_path(const Session& session, std::size_t layer) {
  return fmt::format("{}/layers/{}/modes.json", session.dir, layer);
}

// Opens `name` in `dir` (relative `path`) for its owner, then what is below it.
void open_entry(int dir, const std::string& name, const std::string& path,
                std::map<std::string, mode_t>& kept) {
  struct stat info {};
  if (::fstatat(dir, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
    throw Error(
        "dry_run", errno,
        fmt::format("cannot stat {} in the layer: {}", printable(path), std::strerror(errno)));
  }
  const mode_t mode = info.st_mode & 07777;
  const mode_t wanted = S_ISDIR(info.st_mode) ? S_IRWXU : S_ISREG(info.st_mode) ? S_IRUSR : 0;
  if ((mode & wanted) != wanted) {
    if (::fchmodat(dir, name.c_str(), mode | wanted, 0) != 0) {
      throw Error("dry_run", errno,
                  fmt::format("cannot open {} in the layer for review: {}", printable(path),
                              std::strerror(errno)));
    }
    kept[path] = mode;
  }
  if (!S_ISDIR(info.st_mode)) return;
  const int fd = ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    throw Error(
        "dry_run", errno,
        fmt::format("cannot list {} in the layer: {}", printable(path), std::strerror(errno)));
  }
  DIR* stream = ::fdopendir(fd);
  if (stream == nullptr) {
    ::close(fd);
    throw Error("dry_run", errno, fmt::format("cannot list {} in the layer", printable(path)));
  }
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(stream)) {
    const std::string child = entry->d_name;
    if (child != "." && child != "..") names.push_back(child);
  }
  const UniqueFd self(::dup(::dirfd(stream)));
  ::closedir(stream);
  for (const std::string& child : names)
    open_entry(self.get(), child, path.empty() ? child : path + "/" + child, kept);
}

}  // namespace

void open_layer_for_review(const Session& session, std::size_t layer) {
  const std::string upper = upper_dir(session, layer);
  const auto slash = upper.rfind('/');
  const UniqueFd parent = open_directory(upper.substr(0, slash));
  std::map<std::string, mode_t> kept;
  open_entry(parent.get(), upper.substr(slash + 1), "", kept);
  if (kept.empty()) return;
  nlohmann::json doc = nlohmann::json::array();
  for (const auto& [path, mode] : kept) doc.push_back({text_json(path), mode});
  write_file_atomically(modes_path(session, layer), doc.dump() + "\n");
}

std::map<std::string, mode_t> kept_modes(const Session& session, std::size_t layer) {
  std::map<std::string, mode_t> kept;
  std::ifstream in(modes_path(session, layer));
  if (!in) return kept;
  try {
    for (const auto& entry : nlohmann::json::parse(in))
      kept[text_from(entry.at(0))] = entry.at(1).get<mode_t>();
  } catch (const std::exception& error) {
    throw Error("dry_run", EINVAL,
                fmt::format("{} is damaged: {}", modes_path(session, layer), error.what()));
  }
  return kept;
}

}  // namespace jail::dry_run
