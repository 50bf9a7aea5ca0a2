// Leftovers of jails that died without cleaning up. A jail removes its cgroup when its run ends,
// but `kill -9 jail` leaves no chance to: the tool dies with it (its init sees the go pipe
// close), and an empty jail-<pid>-<random> directory stays behind. The next jail to create a
// cgroup under the same parent removes those whose creator is gone.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <ctime>
#include <string_view>

#include "files.hpp"
#include "log.hpp"

namespace jail::cgroup::files {
namespace {

// Younger than this, a directory may belong to a jail in another pid namespace that has just
// made it and not yet cloned into it; a dead jail's leftovers are older.
constexpr std::time_t kMinimumAgeSeconds = 60;

// The creator's pid of "jail-<pid>-<16 hex>" or "jail-supervisor-<pid>", or 0.
pid_t creator_of(std::string_view name) {
  std::string_view digits;
  if (name.starts_with("jail-supervisor-")) {
    digits = name.substr(16);
  } else if (name.starts_with("jail-")) {
    const std::string_view rest = name.substr(5);
    const auto dash = rest.find('-');
    if (dash == std::string_view::npos || rest.size() - dash - 1 != 16) return 0;
    digits = rest.substr(0, dash);
  } else {
    return 0;
  }
  pid_t pid = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  return error == std::errc() && end == digits.data() + digits.size() && pid > 0 ? pid : 0;
}

}  // namespace

void remove_stale_jails(const std::string& parent) {
  DIR* dir = ::opendir(parent.c_str());
  if (dir == nullptr) return;
  const std::time_t now = std::time(nullptr);
  while (const dirent* entry = ::readdir(dir)) {
    const pid_t creator = creator_of(entry->d_name);
    if (creator == 0 || creator == ::getpid()) continue;
    if (::kill(creator, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
    const std::string path = parent + "/" + entry->d_name;
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) continue;
    if (now - info.st_mtime < kMinimumAgeSeconds) continue;
    // rmdir refuses a cgroup that still has processes or children: only empty ones go.
    if (::rmdir(path.c_str()) == 0) {
      jail::log().debug("cgroup: removed {}, left by a jail (pid {}) that is gone", path, creator);
    }
  }
  ::closedir(dir);
}

}  // namespace jail::cgroup::files
