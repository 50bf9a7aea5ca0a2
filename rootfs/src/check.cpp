#include "rootfs/check.hpp"

#include "jail/utf8.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "fd.hpp"
#include "host_access.hpp"
#include "rootfs/elf.hpp"

namespace jail::rootfs {
namespace {

namespace fs = std::filesystem;

enum class Presence { present, absent };

// As the tool inside the root would find it: RESOLVE_IN_ROOT makes '/' and '..' and absolute
// symlinks stop at `root`, as they did for the tool after pivot_root.
Presence in_root(int root, const LookedUp& lookup) {
  const Fd found(open_in_root(
      root, lookup.path, O_PATH | (lookup.final_link == FinalLink::not_followed ? O_NOFOLLOW : 0)));
  if (found.valid()) return Presence::present;
  // Only "not there" counts; EACCES, ELOOP and the like are the tool's problem with a file
  // the root does have.
  return errno == ENOENT || errno == ENOTDIR ? Presence::absent : Presence::present;
}

// Where `path` leads in the root: its directory resolved there as the tool's lookup resolved it,
// then its last component; `path` itself when that directory is not in the root. /bin/seq and
// /usr/bin/seq lead to one place in a root with /bin -> usr/bin.
std::string place_in_root(int root, const std::string& root_path, const std::string& path) {
  const fs::path name(path);
  const Fd found(open_in_root(root, name.parent_path(), O_PATH | O_DIRECTORY));
  if (!found.valid()) return path;
  std::error_code error;
  const fs::path dir = fs::read_symlink("/proc/self/fd/" + std::to_string(found.get()), error);
  const std::string text = dir.string();
  if (error || !text.starts_with(root_path)) return path;
  return (fs::path("/" + text.substr(root_path.size())) / name.filename()).lexically_normal();
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

// What a terminal must not be sent raw: controls (C0, DEL) and jail::printable's set.
bool shows_wrongly(char32_t c) {
  return c < 0x20 || c == 0x7f || jail::utf8::shows_wrongly(c);
}

// A TOML basic string that is also safe to print: a path may hold any byte but NUL, and it came
// from the tool. Each character that would show wrongly on a terminal is a \uXXXX escape, which
// names it exactly. A byte of no UTF-8 sequence has no TOML form at all: it is written \xNN,
// which the recipe parser refuses, naming the line, rather than read as another path.
std::string toml_string(const std::string& text) {
  std::string quoted = "\"";
  for (std::size_t i = 0; i < text.size();) {
    const auto [length, code_point] = jail::utf8::sequence_at(text, i);
    if (length == 0) {
      quoted += fmt::format("\\x{:02X}", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (code_point == '"' || code_point == '\\') {
      quoted += '\\';
      quoted += text[i];
    } else if (shows_wrongly(code_point)) {
      quoted += fmt::format("\\u{:04X}", static_cast<std::uint32_t>(code_point));
    } else {
      quoted.append(text, i, length);
    }
    i += length;
  }
  return quoted + '"';
}

// The recipe entry names the paths the tool used, not `host` with its symlinks resolved: the
// builder adds a symlink together with what it points to, while a root with only the target
// still fails the tool's lookup of /etc/os-release (-> ../usr/lib/os-release) or of
// /usr/share/zoneinfo/UTC (-> Etc/UTC).
// `place` says where a path leads in the root: of the paths that lead to one place, the first
// is enough.
RecipeEntry recipe_entry(const fs::path& host, const std::vector<LookedUp>& lookups,
                         const std::function<std::string(const std::string&)>& place) {
  std::vector<std::string> names, places;
  for (const auto& lookup : lookups) {
    std::string where = place(lookup.path);
    if (std::find(places.begin(), places.end(), where) != places.end()) continue;
    places.push_back(std::move(where));
    names.push_back(lookup.path);
  }
  std::error_code error;
  if (fs::is_directory(host, error)) return {"trees", names};
  std::optional<ElfInfo> elf;
  // Only a regular file is opened: the path came from the tool, and a FIFO or device it named
  // must not block or disturb the check.
  try {
    if (fs::is_regular_file(host, error)) elf = read_elf(host);
  } catch (const std::exception&) {
    // an ELF file of another kind: copied as a plain file
  }
  if (elf) {
    // By soname, as the loader asks for it: the builder finds it as the loader does.
    for (const auto& name : names) {
      const std::string base = fs::path(name).filename().string();
      if (is_library_name(base)) return {"libraries", {base}};
    }
    if (::access(host.c_str(), X_OK) == 0) return {"binaries", names};
  }
  return {"files", names};
}

// Whether the tree entry `dir` suggests holds every path the tool used for `lookups`.
bool holds(const MissingFile& dir, const std::vector<LookedUp>& lookups) {
  return std::all_of(lookups.begin(), lookups.end(), [&](const LookedUp& lookup) {
    return std::any_of(dir.looked_up_as.begin(), dir.looked_up_as.end(),
                       [&](const LookedUp& name) { return below(lookup.path, name.path); });
  });
}

// The interpreter the kernel looks up when it runs `path` in the root: the one a #! line names,
// or an ELF file's loader (PT_INTERP).
std::optional<std::string> interpreter_in_root(int root, const std::string& path) {
  const Fd found(open_in_root(root, path, O_PATH));
  struct stat info {};
  // Only a regular file is opened for reading: a FIFO or device must not block or be disturbed.
  if (found.get() < 0 || ::fstat(found.get(), &info) != 0 || !S_ISREG(info.st_mode))
    return std::nullopt;
  const Fd file(::open(("/proc/self/fd/" + std::to_string(found.get())).c_str(),
                       O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (file.get() < 0) return std::nullopt;
  // The kernel reads the #! line from the first 256 bytes (BINPRM_BUF_SIZE).
  std::array<char, 256> head{};
  const ssize_t got = ::pread(file.get(), head.data(), head.size(), 0);
  if (got >= 2 && head[0] == '#' && head[1] == '!') {
    std::string line(head.data() + 2, static_cast<std::size_t>(got) - 2);
    line = line.substr(0, line.find('\n'));
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos) return std::nullopt;
    std::string interpreter = line.substr(start, line.find_first_of(" \t", start) - start);
    if (interpreter.front() != '/') return std::nullopt;
    return interpreter;
  }
  try {
    const auto elf = read_elf(file.get(), path);
    if (elf && !elf->interpreter.empty()) return elf->interpreter;
  } catch (const std::exception&) {
    // not an object this machine runs: execve fails with ENOEXEC, not for a missing file
  }
  return std::nullopt;
}

}  // namespace

std::vector<LookedUp> interpreter_lookups(const fs::path& root,
                                          const std::vector<LookedUp>& lookups) {
  const Fd root_fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (root_fd.get() < 0)
    throw std::runtime_error(
        fmt::format("cannot open {}: {}", root.string(), std::strerror(errno)));
  std::vector<LookedUp> found;
  std::vector<std::string> done;
  const auto follow = [&](const LookedUp& run) {
    if (run.final_link != FinalLink::followed) return;
    if (std::find(done.begin(), done.end(), run.path) != done.end()) return;
    done.push_back(run.path);
    if (auto interpreter = interpreter_in_root(root_fd.get(), run.path))
      found.push_back(LookedUp{*std::move(interpreter), kInterpreter});
  };
  for (const auto& lookup : lookups) {
    if (lookup.syscall == "execve" || lookup.syscall == "execveat") follow(lookup);
  }
  // An interpreter may be a script itself, and is an ELF file with a loader of its own; each
  // path is read once, so this ends.
  for (std::size_t i = 0; i < found.size(); ++i) follow(LookedUp(found[i]));
  return found;
}

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
  const Fd root_owner(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  const int root_fd = root_owner.get();
  if (root_fd < 0)
    throw std::runtime_error(
        fmt::format("cannot open {}: {}", root.string(), std::strerror(errno)));
  std::error_code canonical_error;
  const std::string root_path = fs::canonical(root, canonical_error).string();
  std::vector<std::string> provided = {"/proc", "/dev", "/tmp"};
  provided.insert(provided.end(), jail_mounts.begin(), jail_mounts.end());

  std::vector<std::pair<fs::path, LookedUp>> absent;  // on the host, not in the root
  std::map<std::string, fs::path> followed_to;        // lookup path → host path, when followed
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
      if (lookup.final_link == FinalLink::followed) followed_to.emplace(lookup.path, host);
      absent.emplace_back(host, lookup);
    } else {
      report.probing.push_back(lookup);
    }
  }
  // A link the tool looked at (ls: statx without following) and then through goes with what it
  // points to: the entry for that adds the link too.
  std::map<fs::path, std::vector<LookedUp>> missing;  // by host path
  for (auto& [host, lookup] : absent) {
    const auto target = followed_to.find(lookup.path);
    missing[target == followed_to.end() ? host : target->second].push_back(std::move(lookup));
  }

  // A missing directory stands for everything below it that is missing too, when the tree it
  // suggests holds the paths the tool used for them (not so for a path into the same directory
  // through another symlink: that one gets its own entry).
  std::vector<MissingFile> files;
  for (const auto& [host, names] : missing) {
    // Never suggested: a file only root (or its owner or group) can read on the host, by itself
    // or by the path the tool named it with. The check runs as root, often, and a recipe line
    // pasted from it would carry /etc/shadow into a root for any tool.
    if (!anyone_may_read(host) || std::any_of(names.begin(), names.end(), [](const LookedUp& name) {
          return !anyone_may_read(name.path);
        })) {
      report.root_only.push_back(MissingFile{host, names, {}, 0, {}});
      continue;
    }
    const auto dir = std::find_if(files.begin(), files.end(), [&](const MissingFile& file) {
      return below(host.string(), file.host_path.string()) && holds(file, names);
    });
    if (dir != files.end()) {
      ++dir->nested;
      continue;
    }
    const auto place = [&](const std::string& path) {
      return place_in_root(root_fd, root_path, path);
    };
    files.push_back(MissingFile{host, names, recipe_entry(host, names, place), 0,
                                optional_because(host, names)});
  }
  for (auto& file : files)
    (file.optional_because.empty() ? report.missing : report.optional).push_back(std::move(file));
  std::sort(report.probing.begin(), report.probing.end(),
            [](const LookedUp& a, const LookedUp& b) { return a.path < b.path; });
  return report;
}

std::string to_toml(const RecipeEntry& entry) {
  std::vector<std::string> quoted;
  for (const auto& value : entry.values) quoted.push_back(toml_string(value));
  return fmt::format("{} = [{}]", entry.key, fmt::join(quoted, ", "));
}

std::vector<RecipeEntry> merged_recipe(const std::vector<MissingFile>& files) {
  std::vector<RecipeEntry> merged;
  for (const char* key : {"binaries", "libraries", "trees", "files"}) {
    RecipeEntry entry{key, {}};
    for (const MissingFile& file : files) {
      if (file.recipe.key != key) continue;
      for (const auto& value : file.recipe.values) {
        if (std::find(entry.values.begin(), entry.values.end(), value) == entry.values.end())
          entry.values.push_back(value);
      }
    }
    if (!entry.values.empty()) merged.push_back(std::move(entry));
  }
  return merged;
}

}  // namespace jail::rootfs
