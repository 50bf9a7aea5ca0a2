#include "oci/working_directory.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "jail/error.hpp"
#include "spec_check.hpp"

namespace jail::oci {
namespace {

namespace fs = std::filesystem;

// Symlinks followed in one path before it is given up on, as the kernel's limit.
constexpr int kMaxLinks = 40;

// What serves one path of the jail.
struct Place {
  enum class Kind { host, fresh, proc, nothing } kind = Kind::nothing;
  fs::path host;             // Kind::host: the host path that serves it
  bool mount_point = false;  // the path is a bind's target: its source, followed if a link
  std::string described;     // for the message
  bool allow_exec = true;    // Kind::host: the mount that holds it lets files there be run
  bool bound = false;        // Kind::host: in a bound host directory (not the bundle's rootfs)
};

class Resolver {
 public:
  // `ops_before`: only the mounts of the first so many ops count (all when not given).
  Resolver(const child::Plan& plan, const std::vector<OpDescription>& descriptions, fs::path root,
           std::optional<std::size_t> ops_before = std::nullopt)
      : plan_(plan),
        descriptions_(descriptions),
        root_(std::move(root)),
        op_limit_(ops_before.value_or(plan.op_count)) {}

  // The last mount holding `path` (a later one covers an earlier), else the root.
  [[nodiscard]] Place place_of(const std::string& path) const {
    for (std::size_t i = op_limit_; i-- > 0;) {
      const child::MountOp& op = plan_.ops[i];
      const OpDescription& description = descriptions_[i];
      const std::string& target = description.target;
      if (!child::is_mount(op.kind)) continue;  // in the root, not a mount
      if (!jail_path_within(path, target)) continue;
      std::error_code error;
      if (op.kind == child::OpKind::bind && op.optional && !fs::exists(description.source, error))
        continue;  // left out, as the native run skips it
      const std::string below = path.size() > target.size() ? path.substr(target.size() + 1) : "";
      if (op.kind == child::OpKind::proc) return {Place::Kind::proc, {}, false, target};
      if (op.kind != child::OpKind::bind) {
        // Empty but for the mount points of later mounts below it (the cwd bind at
        // /tmp/a/b makes /tmp/a in the jail's /tmp), which are directories there.
        const bool made = below.empty() || leads_to_a_later_mount(i, path);
        return {made ? Place::Kind::fresh : Place::Kind::nothing,
                {},
                false,
                "the jail's own " + target};
      }
      return {Place::Kind::host,
              below.empty() ? fs::path(description.source) : fs::path(description.source) / below,
              below.empty(),
              fmt::format("{} (bound at {})", description.source, target),
              op.allow_exec,
              true};
    }
    return {Place::Kind::host, root_ / path.substr(1), false, "the jail's root"};
  }

  // What the last component of a walked path must be.
  enum class Want { directory, anything };

  // Walks `path` a component at a time. Returns what failed to be a directory (the last
  // component: what `want` asks), or nullopt; `found` (if given) is then what serves the last.
  [[nodiscard]] std::optional<std::string> failure(const std::string& path, Want want,
                                                   Place* found = nullptr) const {
    std::vector<std::string> pending;  // components still to walk, the next one last
    push_components(path, pending);
    std::string current;  // "" is the jail's root
    int links = 0;
    while (!pending.empty()) {
      const std::string part = std::move(pending.back());
      pending.pop_back();
      if (part.empty() || part == ".") continue;
      if (part == "..") {
        current.erase(current.rfind('/') == std::string::npos ? 0 : current.rfind('/'));
        continue;
      }
      const std::string next = current + "/" + part;
      const Place place = place_of(next);
      // runsc's own: it makes nothing there, so a working directory is no concern; what a file
      // path finds in it is not known here, and is not taken for found.
      if (place.kind == Place::Kind::proc)
        return want == Want::directory ? std::nullopt : std::optional(place.described);
      if (place.kind == Place::Kind::nothing) return place.described;
      if (found != nullptr) *found = place;
      if (place.kind == Place::Kind::fresh) {
        current = next;
        continue;
      }
      struct stat info {};
      // A bind's own target shows its source as the mount made it: followed.
      const int got = place.mount_point ? ::stat(place.host.c_str(), &info)
                                        : ::lstat(place.host.c_str(), &info);
      if (got != 0) return place.described;
      if (S_ISLNK(info.st_mode)) {
        std::error_code error;
        const fs::path text = fs::read_symlink(place.host, error);
        if (error || ++links > kMaxLinks) return place.described;
        if (text.is_absolute()) current.clear();  // the jail's root, not the host's
        push_components(text.string(), pending);
        continue;
      }
      if (!S_ISDIR(info.st_mode) && !(want == Want::anything && pending.empty()))
        return place.described;
      current = next;
    }
    return std::nullopt;
  }

 private:
  // Whether a mount after op `index` has its target at or below `path`.
  [[nodiscard]] bool leads_to_a_later_mount(std::size_t index, const std::string& path) const {
    for (std::size_t j = index + 1; j < plan_.op_count; ++j) {
      if (jail_path_within(descriptions_[j].target, path)) return true;
    }
    return false;
  }

  static void push_components(const std::string& path, std::vector<std::string>& pending) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= path.size()) {
      const std::size_t end = std::min(path.find('/', start), path.size());
      parts.push_back(path.substr(start, end - start));
      start = end + 1;
    }
    pending.insert(pending.end(), parts.rbegin(), parts.rend());
  }

  const child::Plan& plan_;
  const std::vector<OpDescription>& descriptions_;
  fs::path root_;
  std::size_t op_limit_;
};

}  // namespace

void check_working_directory(const child::Plan& plan,
                             const std::vector<OpDescription>& descriptions, const fs::path& root,
                             const std::string& cwd) {
  const Resolver resolver(plan, descriptions, root);
  if (const std::optional<std::string> where = resolver.failure(cwd, Resolver::Want::directory)) {
    throw Error("chdir", ENOENT,
                fmt::format("cannot enter the working directory {} inside the jail: it is not a "
                            "directory there (looked for in {}); an OCI runtime would create it, "
                            "on the host through a bind; bind it, or choose --cwd or --no-cwd",
                            cwd, *where));
  }
}

bool exists_in_jail(const child::Plan& plan, const std::vector<OpDescription>& descriptions,
                    const fs::path& root, const std::string& path) {
  const Resolver resolver(plan, descriptions, root);
  return !resolver.failure(path, Resolver::Want::anything).has_value();
}

void check_mount_targets(const child::Plan& plan, const std::vector<OpDescription>& descriptions,
                         const fs::path& root, const bool* left_out) {
  for (std::size_t i = 0; i < plan.op_count; ++i) {
    if (!child::is_mount(plan.ops[i].kind) || (left_out != nullptr && left_out[i])) continue;
    const std::string target = normalize_jail_path(descriptions[i].target);
    if (target.empty() || jail_path_within(target, "/dev")) continue;
    const Resolver before(plan, descriptions, root, i);
    for (std::size_t end = target.find('/', 1);; end = target.find('/', end + 1)) {
      const std::string current = target.substr(0, end);
      const Place place = before.place_of(current);
      struct stat info {};
      if (place.kind == Place::Kind::host && place.bound && !place.mount_point &&
          ::lstat(place.host.c_str(), &info) == 0 && S_ISLNK(info.st_mode)) {
        std::error_code error;
        const fs::path text = fs::read_symlink(place.host, error);
        const std::string where =
            current == target
                ? fmt::format("the mount point {} is a symlink", target)
                : fmt::format("the mount point {} passes through {}, a symlink", target, current);
        throw Error("mount", ELOOP,
                    fmt::format("{}: {} in {} (to {}): an OCI runtime would follow it and mount "
                                "elsewhere in the jail, where jail follows none; mount at a path "
                                "without symlinks",
                                descriptions[i].origin, where, place.described,
                                error ? std::string("?") : text.string()));
      }
      if (end == std::string::npos) break;
    }
  }
}

std::optional<HostFile> host_file_in_jail(const child::Plan& plan,
                                          const std::vector<OpDescription>& descriptions,
                                          const fs::path& root, const std::string& path) {
  const Resolver resolver(plan, descriptions, root);
  Place found;
  if (resolver.failure(path, Resolver::Want::anything, &found) || found.kind != Place::Kind::host)
    return std::nullopt;
  return HostFile{found.host, found.allow_exec};
}

}  // namespace jail::oci
