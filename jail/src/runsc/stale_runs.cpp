#include "runsc/stale_runs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>
#include <string_view>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "log.hpp"

#include "dry_run/tree.hpp"
#include "jail/error.hpp"

namespace jail {
namespace {

constexpr std::string_view kPrefix = "jail-runsc-";
// Older than this, an unlocked directory is no new run's that has not taken its lock yet.
constexpr std::time_t kMinimumAgeSeconds = 60;

// "jail-runsc-<pid>-XXXXXX", as runsc_run_dir_prefix() and mkdtemp make it.
bool named_by_a_locking_run(std::string_view name) {
  if (!name.starts_with(kPrefix)) return false;
  const std::string_view rest = name.substr(kPrefix.size());
  const auto dash = rest.find('-');
  if (dash == std::string_view::npos || dash == 0 || rest.size() - dash - 1 != 6) return false;
  unsigned long pid = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + dash, pid);
  return error == std::errc() && end == rest.data() + dash;
}

// Removes `name` in `parent` if no live run holds it. The lock is held while removing, so a
// second sweeper does not race this one.
void remove_if_dead(int parent, const char* name) {
  const UniqueFd dir(::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat info {};
  if (!dir.valid() || ::fstat(dir.get(), &info) != 0) return;
  if (info.st_uid != ::geteuid() || std::time(nullptr) - info.st_mtime < kMinimumAgeSeconds) {
    return;
  }
  if (::flock(dir.get(), LOCK_EX | LOCK_NB) != 0) return;  // a live run's
  try {
    dry_run::remove_at(parent, name);
    jail::log().debug("removed {}, left by a runsc run whose jail was killed", name);
  } catch (const Error& error) {
    jail::log().debug("could not remove the dead run's {}: {}", name, error.what());
  }
}

}  // namespace

std::string runsc_run_dir_prefix() {
  return fmt::format("{}{}", kPrefix, ::getpid());
}

UniqueFd lock_runsc_run_dir(const std::filesystem::path& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid() || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    throw Error(
        "temp_dir", errno,
        fmt::format("cannot lock the run's directory {}: {}", dir.string(), std::strerror(errno)));
  }
  return fd;
}

void remove_stale_runsc_run_dirs(std::filesystem::path parent) {
  std::error_code error;
  if (parent.empty()) parent = std::filesystem::temp_directory_path(error);
  if (error) return;
  const UniqueFd parent_fd(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent_fd.valid()) return;
  // Its own fd for the listing: fdopendir takes ownership of what it is given.
  DIR* listing = ::fdopendir(::dup(parent_fd.get()));
  if (listing == nullptr) return;
  while (const dirent* entry = ::readdir(listing)) {
    if (entry->d_type != DT_DIR && entry->d_type != DT_UNKNOWN) continue;
    if (!named_by_a_locking_run(entry->d_name)) continue;
    remove_if_dead(parent_fd.get(), entry->d_name);
  }
  ::closedir(listing);
}

}  // namespace jail
