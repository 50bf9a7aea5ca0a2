#include "rootfs/builder.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "host_access.hpp"
#include "root_dir.hpp"
#include "rootfs/elf.hpp"
#include "rootfs/resolver.hpp"

namespace jail::rootfs {
namespace {

namespace fs = std::filesystem;

// jail mounts its own /proc, /dev and /tmp over these: whatever a build put there is hidden.
constexpr std::array kMountPoints = {"proc", "dev", "tmp"};
// At the top of every root jail builds (see Builder::mark_as_built).
constexpr const char* kBuiltMark = ".jail-rootfs";

// Where a library that only the host's loader cache names is linked from, so that the root's
// loader (which has no cache) finds it in a directory it searches by default.
constexpr const char* kCachedLibraryLinks = "/usr/lib/x86_64-linux-gnu";

// A file in the root keeps its permission bits but never set-uid, set-gid or sticky: a copy
// owned by whoever builds (root, often) would be a new set-uid program on the host.
constexpr mode_t kKeptModeBits = 0777;

constexpr std::array kFallbackPath = {"/usr/local/bin",  "/usr/bin",  "/bin",
                                      "/usr/local/sbin", "/usr/sbin", "/sbin"};

fs::path find_binary(const std::string& name) {
  if (name.empty()) throw BuildError("an empty --binary: give a program's name or path");
  if (name.find('/') != std::string::npos) {
    std::error_code error;
    if (!fs::exists(name, error)) throw BuildError(fmt::format("binary {} does not exist", name));
    return fs::absolute(name).lexically_normal();
  }
  std::vector<std::string> dirs;
  const char* path = std::getenv("PATH");
  std::stringstream words(path != nullptr ? path : "");
  for (std::string dir; std::getline(words, dir, ':');) {
    if (!dir.empty() && fs::path(dir).is_absolute()) dirs.push_back(dir);
  }
  dirs.insert(dirs.end(), kFallbackPath.begin(), kFallbackPath.end());
  // The first ELF program of that name: a wrapper script or a version manager's shim earlier
  // on the PATH (pyenv's python3) is passed over for the program a root can hold.
  std::optional<fs::path> first;
  for (const std::string& dir : dirs) {
    const fs::path candidate = fs::path(dir) / name;
    std::error_code error;
    if (::access(candidate.c_str(), X_OK) != 0 || !fs::is_regular_file(candidate, error)) continue;
    if (!first) first = candidate;
    try {
      if (read_elf(fs::canonical(candidate, error))) return candidate;
    } catch (const std::runtime_error&) {
      // another machine's program: not this one
    }
  }
  if (first) return *first;  // not ELF: add_binary says so, naming it
  throw BuildError(fmt::format(
      "binary '{}' is not on this host (searched $PATH and /usr/local/bin /usr/bin /bin "
      "/usr/local/sbin /usr/sbin /sbin); give its path or install it",
      name));
}

// The first name of `path` in the root when it is one of jail's own mount points.
const char* hidden_under(const fs::path& path) {
  const fs::path relative = path.lexically_normal().relative_path();
  if (relative.empty()) return nullptr;
  const std::string top = relative.begin()->string();
  for (const char* dir : kMountPoints) {
    if (top == dir) return dir;
  }
  return nullptr;
}

void refuse_hidden(const fs::path& path, std::string_view what) {
  if (const char* dir = hidden_under(path)) {
    throw BuildError(
        fmt::format("{} {} would be under /{} in the root, where jail mounts its own /{}: the "
                    "tool could not see it; put it elsewhere (e.g. /usr/local or /opt) first",
                    what, path.string(), dir, dir));
  }
}

void write_all(int fd, std::string_view text, const fs::path& where) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw BuildError(fmt::format("cannot write {}: {}", where.string(), std::strerror(errno)));
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

void copy_bytes(int in, int out, const fs::path& source) {
  bool ranged = true;
  for (;;) {
    const ssize_t n = ranged ? ::copy_file_range(in, nullptr, out, nullptr, 1 << 30, 0)
                             : ::sendfile(out, in, nullptr, 1 << 30);
    if (n == 0) return;
    if (n > 0 || errno == EINTR) continue;
    // copy_file_range does not serve every pair of filesystems; sendfile does the same work.
    if (ranged && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)) {
      ranged = false;
      continue;
    }
    throw BuildError(fmt::format("cannot copy {}: {}", source.string(), std::strerror(errno)));
  }
}

class Builder {
 public:
  Builder(const BuildRequest& request, const fs::path& out, const fs::path& staging)
      : out_(out),
        staging_(staging),
        root_(staging),
        share_(request.share_with_host),
        resolver_(request.ld_so_cache) {
    for (const fs::path& given : request.trees) {
      const fs::path tree = fs::absolute(given).lexically_normal();
      trees_.push_back(tree);
      std::error_code error;
      const fs::path real = fs::canonical(tree, error);
      if (!error && real != tree) trees_.push_back(real);
    }
  }

  void prepare() {
    // The host's merged-/usr links (/lib -> usr/lib …) are kept, so every path a binary or the
    // loader names resolves inside the root the same way it does on the host.
    for (const char* top : {"bin", "sbin", "lib", "lib32", "lib64", "libx32"}) {
      const fs::path host = fs::path("/") / top;
      std::error_code error;
      if (!fs::is_symlink(host, error)) continue;
      const fs::path link = fs::read_symlink(host, error);
      if (error) continue;
      (void)root_.directory(fs::path("/") / link);
      if (!root_.entry(top)) root_.symlink(top, link.string());
    }
    for (const char* dir : kMountPoints) (void)root_.directory(dir, 0755);
  }

  void add_binary(const std::string& name) {
    const fs::path path = find_binary(name);
    if (!read_elf(fs::canonical(path))) {
      throw BuildError(
          fmt::format("{} is not an ELF executable (a script? add its interpreter "
                      "as the binary and the script as a file)",
                      path.string()));
    }
    refuse_hidden(path, "binary");
    add_path(path, {}, Kind::program);
  }

  void add_library(const std::string& soname) {
    const ElfInfo none;
    const auto found = resolver_.find(soname, "/", none, {});
    if (!found)
      throw BuildError(fmt::format(
          "library {} is not on this host (looked where the dynamic linker looks); install the "
          "package that has it, or leave it out of --library and the recipe",
          soname));
    add_path(*found, {}, Kind::program);
    link_if_only_cached(soname, *found, {});
  }

  void add_tree(const fs::path& given) {
    const fs::path tree = fs::absolute(given).lexically_normal();
    std::error_code error;
    if (!fs::is_directory(tree, error))
      throw BuildError(fmt::format("tree {} is not a directory", given.string()));
    refuse_hidden(tree, "tree");
    for (const fs::path& own : {out_, staging_}) {
      const auto [end, _] = std::mismatch(tree.begin(), tree.end(), own.begin(), own.end());
      if (end == tree.end()) {
        throw BuildError(
            fmt::format("tree {} holds the root being built ({}); build it outside "
                        "the trees it copies",
                        tree.string(), out_.string()));
      }
    }
    // The tree itself is the caller's path, followed as given; below it nothing is: every entry
    // is opened beneath this descriptor with no symlink on the way, and a symlink is copied as
    // one, its text unchanged. A link the tree's writer put there (config -> /root/.gitconfig)
    // never has the builder read what it names.
    const Fd top(::open(tree.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    struct stat top_info {};
    if (!top.valid() || ::fstat(top.get(), &top_info) != 0)
      throw BuildError(fmt::format("cannot read tree {}: {}", tree.string(), std::strerror(errno)));
    (void)root_.directory(tree, top_info.st_mode);
    for (const fs::path& entry : tree_entries(top.get(), tree))
      copy_tree_entry(top.get(), tree, entry);
  }

  void add_file(const fs::path& given) {
    const fs::path file = fs::absolute(given).lexically_normal();
    std::error_code error;
    if (!fs::exists(fs::symlink_status(file, error)))
      throw BuildError(fmt::format("file {} does not exist", given.string()));
    if (fs::is_directory(file, error)) {
      throw BuildError(fmt::format(
          "file {} is a directory; give it as a tree (--tree, or trees = [...] in a recipe)",
          given.string()));
    }
    refuse_hidden(file, "file");
    add_path(file, {}, Kind::data);
  }

  void add_link(const std::string& where, const std::string& text) {
    refuse_hidden(where, "link");
    root_.symlink(where, text);
    ++report_.links;
  }

  // The generated /etc, except a file the caller put there itself (--file /etc/hosts is theirs).
  void write_etc() {
    (void)root_.directory("/etc");
    write_new("/etc/passwd",
              "root:x:0:0:root:/root:/usr/sbin/nologin\njail:x:1000:1000:jail:/tmp:/bin/sh\n"
              "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
    write_new("/etc/group", "root:x:0:\njail:x:1000:\nnogroup:x:65534:\n");
    write_new("/etc/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files\n");
    write_new("/etc/hosts", "127.0.0.1\tlocalhost\n::1\tlocalhost\n");
    // No ld.so.cache: every library sits in a directory the loader searches by default (or is
    // linked from one, link_if_only_cached), or is found through the RUNPATH it was found by.
  }

  // What tells `--replace` later that this directory is a root it made, and may go: a tree
  // that merely has the shape of one (a debootstrap chroot, an unpacked image) has no mark.
  void mark_as_built() {
    const Fd file = root_.create(kBuiltMark, 0444);
    write_all(file.get(), "made by jail rootfs build; --replace may remove this root\n",
              kBuiltMark);
  }

  // Every directory made gets its mode (the host's): until now the builder could write in it.
  void finish() { root_.finish_directories(); }

  [[nodiscard]] const BuildReport& report() const { return report_; }

 private:
  // A program's file must be one the loader can read; a tree's or a file's may be anything,
  // including an ELF file for another machine, which is copied as data.
  enum class Kind { program, data };
  // Who named a path: the caller (a binary, a library, a file), a file the caller named (its
  // loader, libraries, a link's target), or a file in a tree (an ELF file's loader and
  // libraries). A path in a tree is read only by the tree walk, which copies links as links:
  // never by what names it. What a tree names comes from the tree's writer, who may be the tool
  // the root is for, and comes in only when every host user may read it.
  enum class Origin { named, needed, tree };

  // Every entry below the tree open at `top` (named `tree`), relative to it, sorted: the same
  // tree is built the same way every time. Directories are read by descriptor, beneath `top`.
  static std::set<fs::path> tree_entries(int top, const fs::path& tree) {
    std::set<fs::path> entries;
    std::vector<fs::path> pending = {"."};
    while (!pending.empty()) {
      const fs::path dir = std::move(pending.back());
      pending.pop_back();
      Fd fd(open_beneath(top, dir.string(), O_RDONLY | O_DIRECTORY));
      if (!fd.valid()) {
        // Gone or no longer a directory since it was listed: copy_tree_entry sees what it is.
        if (dir != "." && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)) continue;
        throw BuildError(fmt::format("cannot read tree {}: {}",
                                     (tree / dir).lexically_normal().string(),
                                     std::strerror(errno)));
      }
      DIR* stream = ::fdopendir(fd.get());
      if (stream == nullptr)
        throw BuildError(
            fmt::format("cannot read tree {}: {}", tree.string(), std::strerror(errno)));
      (void)fd.release();
      errno = 0;
      while (const dirent* item = ::readdir(stream)) {
        const std::string name = item->d_name;
        if (name == "." || name == "..") continue;
        const fs::path entry = dir == "." ? fs::path(name) : dir / name;
        entries.insert(entry);
        bool is_dir = item->d_type == DT_DIR;
        if (item->d_type == DT_UNKNOWN) {
          struct stat info {};
          is_dir = ::fstatat(::dirfd(stream), item->d_name, &info, AT_SYMLINK_NOFOLLOW) == 0 &&
                   S_ISDIR(info.st_mode);
        }
        if (is_dir) pending.push_back(entry);
        errno = 0;
      }
      const int err = errno;
      ::closedir(stream);
      if (err != 0) {
        throw BuildError(fmt::format("cannot read tree {}: {}",
                                     (tree / dir).lexically_normal().string(), std::strerror(err)));
      }
    }
    return entries;
  }

  // One entry of the tree open at `top`, as it is now: a directory made with its mode, a
  // symlink made with its text, a regular file placed (and what it needs as an ELF file).
  void copy_tree_entry(int top, const fs::path& tree, const fs::path& entry) {
    const fs::path path = tree / entry;  // where it goes in the root, as on the host
    const std::string changed =
        fmt::format("cannot read {} in tree {}", entry.string(), tree.string());
    const Fd found(open_beneath(top, entry.string(), O_PATH));
    struct stat info {};
    if (!found.valid() || ::fstat(found.get(), &info) != 0) {
      if (errno == ENOENT) return;  // gone since it was listed
      throw BuildError(fmt::format("{}: {}{}", changed, std::strerror(errno),
                                   errno == ELOOP || errno == EXDEV
                                       ? " (a directory on the way became a symlink meanwhile)"
                                       : ""));
    }
    done_.insert(path);
    if (S_ISDIR(info.st_mode)) {
      (void)root_.directory(path, info.st_mode);
    } else if (S_ISLNK(info.st_mode)) {
      std::string text(PATH_MAX, '\0');
      const ssize_t n = ::readlinkat(found.get(), "", text.data(), text.size());
      if (n < 0) throw BuildError(fmt::format("{}: {}", changed, std::strerror(errno)));
      text.resize(static_cast<std::size_t>(n));
      if (!root_.entry(path)) root_.symlink(path, text);
      ++report_.links;
    } else if (S_ISREG(info.st_mode)) {
      // Opened anew for reading (an O_PATH descriptor reads nothing), by the same rule; a FIFO
      // put there meanwhile must not block the build.
      const Fd in(open_beneath(top, entry.string(), O_RDONLY | O_NONBLOCK | O_NOCTTY));
      struct stat now {};
      if (!in.valid() || ::fstat(in.get(), &now) != 0)
        throw BuildError(fmt::format("{}: {}", changed, std::strerror(errno)));
      if (now.st_dev != info.st_dev || now.st_ino != info.st_ino)
        throw BuildError(fmt::format("{}: it changed while the root was built", changed));
      place(path, in.get(), now);
      std::optional<ElfInfo> elf;
      try {
        elf = read_elf(in.get(), path);
      } catch (const std::runtime_error&) {
        // another machine's program, or a damaged one: data
      }
      if (elf) {
        tree_file_ = path;  // for messages
        add_dependencies(path, *elf, {}, Origin::tree);
      }
    }
    // sockets, fifos, devices have no place here
  }

  // Whether `path` is in one of the trees given, as named or with its symlinks resolved.
  [[nodiscard]] bool in_a_tree(const fs::path& path) const {
    return std::any_of(trees_.begin(), trees_.end(), [&](const fs::path& tree) {
      const auto [end, _] = std::mismatch(tree.begin(), tree.end(), path.begin(), path.end());
      return end == tree.end();
    });
  }

  void write_new(const fs::path& path, const std::string& text) {
    if (root_.entry(path)) return;
    const Fd file = root_.create(path, 0644);
    write_all(file.get(), text, path);
    ++report_.files;
    report_.bytes += text.size();
  }

  // Copies `path` (a symlink is recreated and its target added too), then everything an ELF
  // file needs. `inherited_rpath` is the DT_RPATH of the objects that loaded this one.
  void add_path(const fs::path& path, const std::vector<std::string>& inherited_rpath, Kind kind,
                Origin origin = Origin::named) {
    const fs::path normal = path.lexically_normal();
    // A path in a tree is the tree walk's: read by descriptor, its links copied as links, and
    // never followed (a library found there through a RUNPATH may be a link out of it).
    if (origin != Origin::named && in_a_tree(normal)) return;
    if (done_.contains(normal)) return;
    if (origin == Origin::tree && !anyone_may_read(normal)) {
      throw BuildError(fmt::format(
          "{} in a tree needs {}, which only root can read on this host (it is not readable by "
          "others, or is in a directory others cannot search); what a tree's files name comes "
          "into the root only when every user may read it: give it with --binary or --library "
          "if the root should have it",
          tree_file_.string(), normal.string()));
    }
    done_.insert(normal);
    // What jail mounts at run time (/etc/mtab -> ../proc/self/mounts) is there without copying.
    if (hidden_under(normal) != nullptr) return;
    std::error_code error;
    const auto status = fs::symlink_status(normal, error);
    if (fs::is_symlink(status)) {
      const fs::path text = fs::read_symlink(normal, error);
      if (error) return;
      if (!root_.entry(normal)) root_.symlink(normal, text.string());
      ++report_.links;
      const fs::path target = text.is_absolute() ? text : normal.parent_path() / text;
      // A dangling or looping link is kept as the host has it.
      if (fs::exists(target, error)) add_path(target, inherited_rpath, kind, next(origin));
      return;
    }
    if (!fs::is_regular_file(status)) return;  // sockets, fifos, devices have no place here
    place(normal);
    std::optional<ElfInfo> info;
    try {
      info = read_elf(normal);
    } catch (const std::runtime_error&) {
      if (kind == Kind::program) throw;
    }
    if (info) add_dependencies(normal, *info, inherited_rpath, next(origin));
  }

  // Who names what a file from `origin` needs.
  static Origin next(Origin origin) {
    return origin == Origin::tree ? Origin::tree : Origin::needed;
  }

  // `origin`: who named what `object` needs (needed, or tree).
  void add_dependencies(const fs::path& object, const ElfInfo& info, std::vector<std::string> rpath,
                        Origin origin) {
    if (!info.interpreter.empty()) add_path(info.interpreter, {}, Kind::program, origin);
    if (info.runpath.empty()) {
      for (const auto& entry : info.rpath)
        rpath.push_back(expand_origin(entry, object.parent_path()));
    } else {
      rpath.clear();  // DT_RUNPATH stops the inheritance of DT_RPATH, as in ld.so
    }
    std::vector<std::string> searched = rpath;
    for (const auto& entry : info.runpath)
      searched.push_back(expand_origin(entry, object.parent_path()));
    for (const auto& soname : info.needed) {
      const auto found = resolver_.find(soname, object, info, rpath);
      if (!found) {
        throw BuildError(fmt::format(
            "{} needs {}, which this host does not have (searched its RUNPATH/RPATH, "
            "/etc/ld.so.cache and the default directories); install it or drop the binary",
            object.string(), soname));
      }
      add_path(*found, rpath, Kind::program, origin);
      link_if_only_cached(soname, *found, searched);
    }
  }

  // The root has no loader cache; a library the host's cache found outside the directories the
  // loader searches by default and outside the object's RPATH/RUNPATH is linked from one it does.
  void link_if_only_cached(const std::string& soname, const fs::path& found,
                           const std::vector<std::string>& searched) {
    if (soname.find('/') != std::string::npos) return;
    const fs::path dir = found.parent_path().lexically_normal();
    if (is_default_library_dir(dir)) return;
    for (const std::string& entry : searched) {
      if (fs::path(entry).lexically_normal() == dir) return;
    }
    const fs::path link = fs::path(kCachedLibraryLinks) / soname;
    if (root_.entry(link)) return;
    root_.symlink(link, found.string());
    ++report_.links;
  }

  // A reflink where the filesystem can (a private copy that costs nothing), else a hard link
  // (the same inode as the host's file; the root is mounted read-only by jail), else a copy.
  // Never into what is at `path` already: it may be a hard link to a host file.
  void place(const fs::path& path) {
    const Fd in(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    struct stat info {};
    if (!in.valid() || ::fstat(in.get(), &info) != 0)
      throw BuildError(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
    place(path, in.get(), info);
  }

  // The open host file `in` (whose status is `info`) at `path` in the root, read from its start.
  void place(const fs::path& path, int in, const struct stat& info) {
    report_.bytes += static_cast<std::uint64_t>(info.st_size);
    ++report_.files;
    if (root_.entry(path)) return;
    const mode_t mode = info.st_mode & kKeptModeBits;
    {
      const Fd out = root_.create(path, mode);
      if (share_ && ::ioctl(out.get(), FICLONE, in) == 0 && ::fchmod(out.get(), mode) == 0) {
        ++report_.shared_with_host;
        return;
      }
    }
    // A hard link keeps the host's set-id bits, and the host's later upgrade would not reach it.
    if (share_ && (info.st_mode & 07000) == 0) {
      root_.remove(path);
      if (root_.link(in, path)) {
        ++report_.shared_with_host;
        return;
      }
    }
    const Fd out = root_.create(path, mode);
    copy_bytes(in, out.get(), path);
    if (::fchmod(out.get(), mode) != 0)
      throw BuildError(
          fmt::format("cannot set the mode of {}: {}", path.string(), std::strerror(errno)));
  }

  fs::path out_;
  fs::path staging_;
  RootDir root_;
  bool share_;
  LibraryResolver resolver_;
  std::vector<fs::path> trees_;  // as given (absolute) and with their symlinks resolved
  fs::path tree_file_;           // the tree's ELF file whose needs are being added
  std::set<fs::path> done_;
  BuildReport report_;
};

bool is_empty_directory(const fs::path& dir) {
  std::error_code error;
  return fs::is_empty(dir, error) && !error;
}

// A root `jail rootfs build` made: it carries the builder's mark.
bool is_a_built_root(const fs::path& dir) {
  std::error_code error;
  return fs::is_regular_file(fs::symlink_status(dir / kBuiltMark, error));
}

// Removes a root the builder made. Its directories have the host's modes, and a read-only one
// (a copied module cache's 0555) keeps a builder that is not root from emptying it: then each
// directory of its own is opened to it (u+rwx) first, and the removal tried again.
void remove_root(const fs::path& dir, std::error_code& error) {
  fs::remove_all(dir, error);
  if (!error || ::geteuid() == 0) return;
  std::error_code ignored;
  const auto open_up = [&](const fs::path& path) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == ::geteuid())
      (void)::chmod(path.c_str(), (info.st_mode & 07777) | S_IRWXU);
  };
  open_up(dir);
  // Each directory is opened up when visited, before the iterator descends into it.
  for (auto it = fs::recursive_directory_iterator(dir, ignored);
       it != fs::recursive_directory_iterator(); it.increment(ignored)) {
    open_up(it->path());
  }
  error.clear();
  fs::remove_all(dir, error);
}

// Whether OUT is there to be replaced (false: absent); throws when it may not be built over.
bool check_out(const fs::path& out, bool replace) {
  if (out == out.root_path()) throw BuildError("refusing to build a root over /");
  struct stat info {};
  if (::lstat(out.c_str(), &info) != 0) {
    if (errno == ENOENT) return false;
    throw BuildError(fmt::format("cannot use {}: {}", out.string(), std::strerror(errno)));
  }
  if (!S_ISDIR(info.st_mode)) {
    throw BuildError(fmt::format("{} exists and is not a directory{}; give a new directory",
                                 out.string(), S_ISLNK(info.st_mode) ? " (a symlink)" : ""));
  }
  if (is_empty_directory(out)) return true;
  if (!replace) {
    throw BuildError(fmt::format(
        "{} exists and is not empty; give a new or empty directory, or --replace to put the new "
        "root in its place (a root built earlier: its content is removed)",
        out.string()));
  }
  if (!is_a_built_root(out)) {
    throw BuildError(fmt::format(
        "--replace: {} is not a root jail rootfs build made (it has no {} mark); not removing "
        "it. Remove it yourself if it is meant to go",
        out.string(), kBuiltMark));
  }
  return true;
}

// The finished root goes to OUT in one rename; one it replaces is removed after, but only when
// it still is what check_out let through (a build can take minutes, and OUT may have been filled
// or replaced meanwhile): otherwise the two are swapped back. `staging` is cleared when what it
// holds is not the builder's to remove.
void publish(fs::path& staging, const fs::path& out, bool replacing) {
  if (!replacing) {
    if (::rename(staging.c_str(), out.c_str()) != 0) {
      throw BuildError(
          fmt::format("cannot move the new root to {}: {}", out.string(), std::strerror(errno)));
    }
    return;
  }
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, out.c_str(), RENAME_EXCHANGE) != 0) {
    throw BuildError(fmt::format("cannot put the new root in place of {}: {}", out.string(),
                                 std::strerror(errno)));
  }
  struct stat info {};
  const bool as_checked = ::lstat(staging.c_str(), &info) == 0 && S_ISDIR(info.st_mode) &&
                          (is_empty_directory(staging) || is_a_built_root(staging));
  if (!as_checked) {
    if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, out.c_str(), RENAME_EXCHANGE) != 0) {
      const int err = errno;
      const fs::path kept = staging;
      staging.clear();
      throw BuildError(fmt::format(
          "{} changed during the build and is no longer a root jail rootfs build made; it is "
          "now in {} and the new root in {} (cannot swap them back: {})",
          out.string(), kept.string(), out.string(), std::strerror(err)));
    }
    throw BuildError(fmt::format(
        "{} changed during the build and is no longer empty or a root jail rootfs build made; "
        "left as it is, and the new root not kept",
        out.string()));
  }
  std::error_code error;
  remove_root(staging, error);  // the old root now
  if (error) {
    throw BuildError(fmt::format("built {}, but the root it replaced is left in {}: {}",
                                 out.string(), staging.string(), error.message()));
  }
}

}  // namespace

BuildReport build_rootfs(const BuildRequest& request) {
  if (request.out.empty()) throw BuildError("no output directory given");
  if (request.binaries.empty() && request.trees.empty() && request.files.empty() &&
      request.libraries.empty() && request.links.empty()) {
    throw BuildError(
        "nothing to put in the root: give --binary, --tree, --file, --library or --recipe");
  }
  fs::path out = fs::absolute(request.out).lexically_normal();
  if (out.filename().empty() && out != out.root_path()) out = out.parent_path();  // "root/"
  fs::path staging;
  try {
    const bool replacing = check_out(out, request.replace);
    fs::create_directories(out.parent_path());
    // Built beside OUT (the same filesystem, so one rename publishes it) and only then moved
    // there: a failed build leaves no half-made root that `jail --rootfs` would take.
    std::string pattern =
        (out.parent_path() / ("." + out.filename().string() + ".building-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw BuildError(fmt::format("cannot make a directory beside {} to build in: {}",
                                   out.string(), std::strerror(errno)));
    }
    staging = pattern;
    Builder builder(request, out, staging);
    builder.prepare();
    for (const auto& binary : request.binaries) builder.add_binary(binary);
    for (const auto& library : request.libraries) builder.add_library(library);
    for (const auto& tree : request.trees) builder.add_tree(tree);
    for (const auto& file : request.files) builder.add_file(file);
    for (const auto& [where, text] : request.links) builder.add_link(where, text);
    builder.write_etc();
    builder.mark_as_built();
    builder.finish();
    // Readable by the unprivileged user the tool runs as, whatever the builder's umask.
    if (::chmod(staging.c_str(), 0755) != 0) {
      throw BuildError(
          fmt::format("cannot make {} readable: {}", staging.string(), std::strerror(errno)));
    }
    publish(staging, out, replacing);
    return builder.report();
  } catch (...) {
    std::error_code ignored;
    if (!staging.empty() && fs::exists(fs::symlink_status(staging, ignored)))
      remove_root(staging, ignored);
    try {
      throw;
    } catch (const fs::filesystem_error& error) {
      throw BuildError(fmt::format("building {}: {}", request.out.string(), error.what()));
    } catch (const BuildError&) {
      throw;
    } catch (const std::runtime_error& error) {
      throw BuildError(error.what());
    }
  }
}

}  // namespace jail::rootfs
