#include "rootfs/check.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "rootfs/elf.hpp"

namespace jail::rootfs {
namespace {

namespace fs = std::filesystem;

enum class Presence { present, absent };

// As the tool inside the root would find it: RESOLVE_IN_ROOT makes '/' and '..' and absolute
// symlinks stop at `root`, as they did for the tool after pivot_root.
Presence in_root(int root, const LookedUp& lookup) {
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC | (lookup.final_link == FinalLink::not_followed ? O_NOFOLLOW : 0);
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  const long fd = ::syscall(SYS_openat2, root, lookup.path.c_str(), &how, sizeof how);
  if (fd >= 0) {
    ::close(static_cast<int>(fd));
    return Presence::present;
  }
  // Only "not there" counts; EACCES, ELOOP and the like are the tool's problem with a file
  // the root does have.
  return errno == ENOENT || errno == ENOTDIR ? Presence::absent : Presence::present;
}

bool below(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir || (path.starts_with(dir) && path[dir.size()] == '/');
}

struct OptionalFile {
  const char* path;  // the file, or a directory holding such files
  const char* instead;
};

// What glibc looks for in every program and does well without; a root from jail rootfs build
// leaves these out on purpose.
constexpr std::array kOptionalFiles = {
    OptionalFile{
        "/etc/ld.so.cache",
        "the loader searches its default directories, where jail rootfs build puts every library"},
    OptionalFile{"/usr/lib/locale", "the C library uses the plain C locale (ASCII)"},
    OptionalFile{"/usr/share/locale", "the C library uses the plain C locale (ASCII)"},
    OptionalFile{"/etc/locale.alias", "the C library uses the plain C locale (ASCII)"},
    OptionalFile{"/etc/localtime", "the C library uses UTC"},
};

std::string optional_because(const fs::path& host, const std::vector<LookedUp>& names) {
  for (const OptionalFile& file : kOptionalFiles) {
    if (below(host.string(), file.path)) return file.instead;
    for (const auto& name : names) {
      if (below(name.path, file.path)) return file.instead;
    }
  }
  return {};
}

bool is_library_name(const std::string& name) {
  return name.starts_with("lib") && name.find(".so") != std::string::npos;
}

std::string recipe_line(const fs::path& host, const std::vector<LookedUp>& names) {
  std::error_code error;
  if (fs::is_directory(host, error)) return fmt::format("trees = [\"{}\"]", host.string());
  std::optional<ElfInfo> elf;
  // Only a regular file is opened: the path came from the tool, and a FIFO or device it named
  // must not block or disturb the check.
  try {
    if (fs::is_regular_file(host, error)) elf = read_elf(host);
  } catch (const std::exception&) {
    // an ELF file of another kind: copied as a plain file
  }
  if (elf) {
    for (const auto& name : names) {
      const std::string base = fs::path(name.path).filename().string();
      if (is_library_name(base)) return fmt::format("libraries = [\"{}\"]", base);
    }
    if (::access(host.c_str(), X_OK) == 0) return fmt::format("binaries = [\"{}\"]", host.string());
  }
  return fmt::format("files = [\"{}\"]", host.string());
}

}  // namespace

std::optional<std::string> why_not_a_root(const fs::path& root) {
  std::error_code error;
  const auto status = fs::status(root, error);
  if (!fs::exists(status))
    return fmt::format("{} does not exist (build it with jail rootfs build)", root.string());
  if (!fs::is_directory(status)) return fmt::format("{} is not a directory", root.string());
  for (const char* mount_point : {"proc", "dev", "tmp"}) {
    if (!fs::is_directory(root / mount_point, error)) {
      return fmt::format(
          "{} is not a root for jail --rootfs: it has no {}/ directory for the jail to mount on "
          "(jail rootfs build makes one)",
          root.string(), mount_point);
    }
  }
  return std::nullopt;
}

CheckReport check_lookups(const fs::path& root, const std::vector<LookedUp>& lookups,
                          const std::vector<std::string>& jail_mounts) {
  CheckReport report;
  const int root_fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    throw std::runtime_error(
        fmt::format("cannot open {}: {}", root.string(), std::strerror(errno)));
  std::vector<std::string> provided = {"/proc", "/dev", "/tmp"};
  provided.insert(provided.end(), jail_mounts.begin(), jail_mounts.end());

  std::map<fs::path, std::vector<LookedUp>> missing;  // by host path
  for (const LookedUp& lookup : lookups) {
    if (std::any_of(provided.begin(), provided.end(),
                    [&](const auto& dir) { return below(lookup.path, dir); })) {
      ++report.provided;
      continue;
    }
    if (in_root(root_fd, lookup) == Presence::present) {
      ++report.present;
      continue;
    }
    std::error_code error;
    // The file to add: the link itself when the lookup stopped there (in a directory named with
    // its symlinks resolved, as everything here is), else what the path resolves to.
    const fs::path host = lookup.final_link == FinalLink::not_followed
                              ? fs::canonical(fs::path(lookup.path).parent_path(), error) /
                                    fs::path(lookup.path).filename()
                              : fs::canonical(lookup.path, error);
    struct stat info {};
    if (!error && ::lstat(host.c_str(), &info) == 0) {
      missing[host].push_back(lookup);
    } else {
      report.probing.push_back(lookup);
    }
  }
  ::close(root_fd);

  // A missing directory stands for everything below it that is missing too.
  for (auto it = missing.begin(); it != missing.end(); ++it) {
    MissingFile file{it->first, it->second, recipe_line(it->first, it->second), 0,
                     optional_because(it->first, it->second)};
    auto next = std::next(it);
    while (next != missing.end() && below(next->first.string(), it->first.string())) {
      ++file.nested;
      ++next;
    }
    it = std::prev(next);
    (file.optional_because.empty() ? report.missing : report.optional).push_back(std::move(file));
  }
  std::sort(report.probing.begin(), report.probing.end(),
            [](const LookedUp& a, const LookedUp& b) { return a.path < b.path; });
  return report;
}

}  // namespace jail::rootfs
