// What a dry run changed: the upper layer of each bound directory read against the host's
// directory (the lower layer), the way overlayfs itself merges them.
//  - a character device 0:0 in the upper layer is a whiteout: the lower entry was deleted;
//  - a directory marked opaque (user.overlay.opaque = "y") hides everything of the lower one:
//    what the lower had and the upper does not was deleted, at every depth below it;
//  - a file copied up only for a metadata change (touch, chown) with the same content and mode is
//    no change at all.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dry_run/layer_modes.hpp"
#include "dry_run/manifest.hpp"
#include "dry_run/tree.hpp"
#include "jail/dry_run.hpp"
#include "jail/error.hpp"

namespace jail::dry_run {
namespace {

constexpr mode_t kCommittableFileBits = 07777 & ~(S_ISUID | S_ISGID);

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

std::set<std::string> names_below(const std::string& path) {
  std::set<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
    names.insert(entry.path().filename().string());
  }
  if (error) {
    throw Error("dry_run", error.value(), fmt::format("cannot list {}: {}", path, error.message()));
  }
  return names;
}

bool is_opaque(const std::string& path) {
  for (const char* name : {"user.overlay.opaque", "trusted.overlay.opaque"}) {
    char value[4] = {};
    const ssize_t n = ::lgetxattr(path.c_str(), name, value, sizeof value);
    if (n == 1 && value[0] == 'y') return true;
  }
  return false;
}

bool same_content(int lower_dir, const std::string& name, const std::string& upper_path) {
  const UniqueFd a(::openat(lower_dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  const UniqueFd b(::open(upper_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!a.valid() || !b.valid()) return false;
  char left[1 << 15];
  char right[1 << 15];
  for (;;) {
    const ssize_t n = ::read(a.get(), left, sizeof left);
    if (n < 0) return false;
    ssize_t got = 0;
    while (got < n) {
      const ssize_t m = ::read(b.get(), right + got, static_cast<std::size_t>(n - got));
      if (m <= 0) return false;
      got += m;
    }
    if (n == 0) return ::read(b.get(), right, 1) == 0;
    if (std::memcmp(left, right, static_cast<std::size_t>(n)) != 0) return false;
  }
}

class Walker {
 public:
  Walker(const Session& session, std::size_t layer, std::vector<Change>& out)
      : session_(session),
        layer_(layer),
        upper_root_(upper_dir(session, layer)),
        lower_root_(open_layer_root_or_throw(session.binds[layer].host_dir)),
        out_(out),
        kept_modes_(kept_modes(session, layer)) {}

  // Once the layer is walked: an added file that is another name of a file of the layer (the
  // first of its names in path order) is a hard link the tool made, shown as such.
  void name_hard_links() {
    for (const auto& [index, inode] : added_links_) {
      const std::string& first = linked_.at(inode);
      if (first != out_[index].relative) out_[index].hard_link_of = first;
    }
  }

  void walk(const std::string& relative, bool opaque) {
    const std::string upper = join(upper_root_, relative);
    const UniqueFd lower = open_beneath(lower_root_.get(), relative, O_PATH | O_DIRECTORY);
    const std::set<std::string> names = names_below(upper);
    for (const std::string& name : names) visit(relative, name, lower.get(), opaque);
    if (!opaque || !lower.valid()) return;
    for (const std::string& name : names_below(fmt::format("/proc/self/fd/{}", lower.get()))) {
      if (names.count(name) == 0) {
        record(join(relative, name), ChangeKind::deleted, state_at(lower.get(), name, false), {},
               nullptr);
      }
    }
  }

 private:
  void visit(const std::string& relative, const std::string& name, int lower, bool opaque) {
    const std::string path = join(relative, name);
    const std::string upper_path = join(upper_root_, path);
    struct stat info {};
    if (::lstat(upper_path.c_str(), &info) != 0) {
      throw Error("dry_run", errno,
                  fmt::format("cannot stat {}: {}", upper_path, std::strerror(errno)));
    }
    const HostState before = lower >= 0 ? state_at(lower, name, false) : HostState{};
    HostState after;
    after.exists = true;
    after.type = type_of(info.st_mode);
    after.size = static_cast<std::uint64_t>(info.st_size);
    // A commit never writes a set-uid or set-gid file: it makes new files the directory owner's
    // (root's, often), and the tool's own set-uid bit — harmless on its unprivileged uid inside
    // the jail — would then make a root program of whatever it wrote. Listed as committed.
    const auto kept = kept_modes_.find(path);
    const mode_t mode = kept != kept_modes_.end() ? kept->second : info.st_mode & 07777;
    after.mode = mode & (S_ISREG(info.st_mode) ? kCommittableFileBits : 07777);

    if (S_ISREG(info.st_mode) && info.st_nlink > 1) {
      const auto [first, added] = linked_.emplace(info.st_ino, path);
      if (!added && path < first->second) first->second = path;
    }
    if (S_ISCHR(info.st_mode) && info.st_rdev == makedev(0, 0)) {
      if (before.exists) record(path, ChangeKind::deleted, before, {}, nullptr);
      return;
    }
    if (!before.exists) {
      record(path, ChangeKind::added, before, after, &info);
    } else if (before.type != after.type) {
      record(path, ChangeKind::modified, before, after, &info);
    } else if (after.type == EntryType::file) {
      if (before.size != after.size || !same_content(lower, name, upper_path)) {
        record(path, ChangeKind::modified, before, after, &info);
      } else if ((before.mode & kCommittableFileBits) != after.mode) {
        record(path, ChangeKind::mode_changed, before, after, &info);
      }
    } else if (after.type == EntryType::symlink) {
      if (read_link_at(lower, name) != read_link_at(AT_FDCWD, upper_path)) {
        record(path, ChangeKind::modified, before, after, &info);
      }
    } else if (after.type == EntryType::directory) {
      if (before.mode != after.mode) record(path, ChangeKind::mode_changed, before, after, &info);
    } else {
      record(path, ChangeKind::modified, before, after, &info);
    }
    if (after.type == EntryType::directory) walk(path, opaque || is_opaque(upper_path));
  }

  // `upper`: the upper entry's lstat (null for a deletion).
  void record(const std::string& path, ChangeKind kind, const HostState& before,
              const HostState& after, const struct stat* upper) {
    Change change;
    if (kind == ChangeKind::added && upper != nullptr && S_ISREG(upper->st_mode) &&
        upper->st_nlink > 1) {
      added_links_.emplace_back(out_.size(), upper->st_ino);
    }
    change.host_path = session_.binds[layer_].host_dir + "/" + path;
    change.relative = path;
    change.layer = layer_;
    change.kind = kind;
    change.type = kind == ChangeKind::deleted ? before.type : after.type;
    change.old_size = before.size;
    change.new_size = after.size;
    change.new_data = after.size;
    if (upper != nullptr && S_ISREG(upper->st_mode)) {
      // Sparse when a block's worth or more is not on disk (a tiny file may live in its inode,
      // with no block at all, and is not sparse).
      const auto on_disk = static_cast<std::uint64_t>(upper->st_blocks) * 512;
      if (on_disk + 4096 < after.size) change.new_data = on_disk;
    }
    change.old_mode = before.mode;
    change.new_mode = after.mode;
    change.before = before;
    if (kind != ChangeKind::deleted && after.type == EntryType::symlink) {
      change.link_target = read_link_at(AT_FDCWD, join(upper_root_, path));
    }
    out_.push_back(std::move(change));
  }

  const Session& session_;
  std::size_t layer_;
  std::string upper_root_;
  UniqueFd lower_root_;
  std::vector<Change>& out_;
  std::map<ino_t, std::string> linked_;  // files of the layer with more names: the first
  std::vector<std::pair<std::size_t, ino_t>> added_links_;  // out_ index of such an added name
  std::map<std::string, mode_t> kept_modes_;  // the tool's own, where review needed others
};

}  // namespace

std::vector<Change> changes(const Session& session) {
  std::vector<Change> out;
  for (std::size_t layer = 0; layer < session.binds.size(); ++layer) {
    Walker walker(session, layer, out);
    walker.walk("", is_opaque(upper_dir(session, layer)));
    walker.name_hard_links();
  }
  std::sort(out.begin(), out.end(), [](const Change& a, const Change& b) {
    return std::tie(a.layer, a.relative) < std::tie(b.layer, b.relative);
  });
  return out;
}

std::string new_content_path(const Session& session, const Change& change) {
  if (change.kind == ChangeKind::deleted) return {};
  return upper_dir(session, change.layer) + "/" + change.relative;
}

std::vector<std::string> entries_removed(const Session& session, const Change& change,
                                         std::size_t limit, std::size_t& total) {
  total = 0;
  if (!removes_tree(change)) return {};
  const UniqueFd root = open_layer_root(session.binds.at(change.layer).host_dir);
  const UniqueFd directory =
      root.valid() ? open_beneath(root.get(), change.relative, O_PATH | O_DIRECTORY) : UniqueFd();
  if (!directory.valid()) return {};
  std::vector<std::string> below;
  list_tree(directory.get(), "", below);
  std::sort(below.begin(), below.end());
  total = below.size();
  if (below.size() > limit) below.resize(limit);
  return below;
}

bool removes_tree(const Change& change) {
  return change.before.exists && change.before.type == EntryType::directory &&
         (change.kind == ChangeKind::deleted || change.type != EntryType::directory);
}

const char* to_string(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::added:
      return "added";
    case ChangeKind::modified:
      return "modified";
    case ChangeKind::deleted:
      return "deleted";
    case ChangeKind::mode_changed:
      return "mode_changed";
  }
  return "?";
}

const char* to_string(EntryType type) {
  switch (type) {
    case EntryType::file:
      return "file";
    case EntryType::directory:
      return "directory";
    case EntryType::symlink:
      return "symlink";
    case EntryType::special:
      return "special";
  }
  return "?";
}

}  // namespace jail::dry_run
