#include "landlock_ruleset.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "dry_run/tree.hpp"
#include "jail/error.hpp"
#include "root_layout.hpp"

namespace jail {
namespace {

// The kernel's ABI (linux/landlock.h); Debian 12's headers stop at ABI 2.
struct RulesetAttr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;
  std::uint64_t scoped;
};
struct [[gnu::packed]] PathBeneathAttr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
};
constexpr int kRulePathBeneath = 1;

constexpr std::uint64_t kExecute = 1ULL << 0;
constexpr std::uint64_t kWriteFile = 1ULL << 1;
constexpr std::uint64_t kReadFile = 1ULL << 2;
constexpr std::uint64_t kReadDir = 1ULL << 3;
constexpr std::uint64_t kTruncate = 1ULL << 14;  // ABI 3
constexpr std::uint64_t kIoctlDev = 1ULL << 15;  // ABI 5
constexpr std::uint64_t kAbi1All = (1ULL << 13) - 1;
constexpr std::uint64_t kRefer = 1ULL << 13;      // ABI 2
constexpr std::uint64_t kNetBindTcp = 1ULL << 0;  // ABI 4
constexpr std::uint64_t kNetConnectTcp = 1ULL << 1;
constexpr std::uint64_t kScopeAbstract = 1ULL << 0;  // ABI 6
constexpr std::uint64_t kScopeSignal = 1ULL << 1;

constexpr std::uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;

std::uint64_t handled_fs(long abi) {
  std::uint64_t rights = kAbi1All;
  if (abi >= 2) rights |= kRefer;
  if (abi >= 3) rights |= kTruncate;
  if (abi >= 5) rights |= kIoctlDev;
  return rights;
}

class Builder {
 public:
  Builder(int fd, std::uint64_t handled) : fd_(fd), handled_(handled) {}

  // `rights` on `path` and all below it; a file takes only the rights a file can have. Absent
  // paths are skipped when `optional`.
  // `follow`: the path may go through symlinks (jail's own paths: /bin is one). A caller's bind
  // and what is below it may not: a link planted there would grant its target.
  void grant(const std::string& path, std::uint64_t rights, bool optional, bool follow = true) {
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
    how.resolve = follow ? 0 : RESOLVE_NO_SYMLINKS;
    const UniqueFd target(
        static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how)));
    if (!target.valid()) {
      if (optional && errno == ENOENT) return;
      fail(path, errno);
    }
    struct stat info {};
    if (::fstat(target.get(), &info) != 0) fail(path, errno);
    if (!S_ISDIR(info.st_mode)) rights &= kFileRights;
    const PathBeneathAttr rule{rights & handled_, target.get()};
    if (::syscall(SYS_landlock_add_rule, fd_, kRulePathBeneath, &rule, 0) != 0) fail(path, errno);
  }

 private:
  [[noreturn]] static void fail(const std::string& path, int err) {
    throw Error("landlock", err,
                fmt::format("cannot grant the tool {} in its Landlock ruleset: {}", path,
                            std::strerror(err)));
  }
  int fd_;
  std::uint64_t handled_;
};

// `rights` on `dir` but for the entries `hidden` (paths relative to it): the directories on the
// way to one may be listed, and everything else below them is granted whole.
void grant_except(Builder& builder, const std::string& dir, const std::vector<std::string>& hidden,
                  std::uint64_t rights, bool follow_dir = false) {
  if (hidden.empty()) {
    builder.grant(dir, rights, false, follow_dir);
    return;
  }
  builder.grant(dir, kReadDir, false, follow_dir);
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (std::find(hidden.begin(), hidden.end(), name) != hidden.end()) continue;
    std::vector<std::string> below;
    for (const std::string& path : hidden) {
      if (path.starts_with(name + "/")) below.push_back(path.substr(name.size() + 1));
    }
    const std::string path = entry.path().string();
    // A symlink is not granted: its target would be (a link to / would grant all of it).
    if (entry.is_symlink(error)) continue;
    if (below.empty() || !entry.is_directory(error)) {
      builder.grant(path, rights, true, false);
    } else {
      grant_except(builder, path, below, rights);
    }
  }
  if (error) {
    throw Error("landlock", error.value(),
                fmt::format("cannot list {} to grant it entry by entry: {}", dir, error.message()));
  }
}

// A bound directory that holds credential stores (kMaskedSecrets) is granted around them;
// returns their host paths.
std::vector<std::string> grant_around_secrets(Builder& builder, const Spec& spec,
                                              const std::string& dir, std::uint64_t rights,
                                              bool follow) {
  std::vector<std::string> hidden, masked;
  for (const std::string_view name : kMaskedSecrets) {
    const std::string path = dir + "/" + std::string(name);
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) continue;
    if (std::find(spec.unmask.begin(), spec.unmask.end(), path) != spec.unmask.end()) continue;
    hidden.emplace_back(name);
    masked.push_back(path);
  }
  grant_except(builder, dir, hidden, rights, follow);
  return masked;
}

// A mount's path as the host has it: absolute, "/a/./b/" as /a/b, so that paths compare.
std::string host_path(const std::string& path) {
  if (path.empty()) return path;
  std::string normal = std::filesystem::absolute(path).lexically_normal().string();
  if (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

}  // namespace

void check_landlock_spec(const Spec& spec) {
  const auto refuse = [](const std::string& what) {
    throw Error("landlock", EINVAL, "the Landlock mode (no user namespace here) cannot " + what);
  };
  if (::geteuid() == 0) {
    refuse(
        "run a root caller's tool: it would be host root; root can make namespaces, so use "
        "--isolation namespaces");
  }
  if (spec.dry_run) refuse("make a dry run: its layers need a mount namespace");
  if (spec.rootfs) refuse("use --rootfs: a root of its own needs a mount namespace");
  if ((spec.uid && *spec.uid != ::getuid()) || (spec.gid && *spec.gid != ::getgid()))
    refuse("give the tool another uid or gid: it runs as the caller");
  if (spec.hostname != "jail") refuse("set --hostname: the tool has the host's UTS namespace");
  if (!spec.net_allow.empty()) {
    refuse(
        "give the tool an allow-list of hosts (--net-allow): its only way out would be a network "
        "namespace of its own; use --net none, or a host where user namespaces work");
  }
  if (spec.net == Net::none && spec.policy == kNoPolicy)
    refuse("keep --net none without a seccomp filter (--policy none): the filter is what holds it");
  for (const Mount& mount : spec.mounts) {
    if (mount.kind == MountKind::tmpfs) {
      refuse(fmt::format("mount a tmpfs at {} ({}): the tool's TMPDIR is its private directory",
                         mount.target, mount.origin));
    }
    const std::string source = host_path(mount.source);
    const std::string target = host_path(mount.target);
    if (source != target) {
      refuse(
          fmt::format("show {} at {} ({}): with no mount namespace a path is where it is on "
                      "the host; bind it at its own path",
                      mount.source, mount.target, mount.origin));
    }
    if (mount.kind != MountKind::ro_bind) continue;
    for (const Mount& outer : spec.mounts) {
      if (outer.kind != MountKind::bind) continue;
      const std::string outer_source = host_path(outer.source);
      if ((source.starts_with(outer_source + "/") || outer_source == "/")) {
        refuse(
            fmt::format("keep {} read-only inside the writable {} ({}): Landlock only grants, "
                        "and the writable grant covers it",
                        mount.source, outer.source, mount.origin));
      }
    }
  }
}

void remove_stale_private_tmps() {
  std::error_code error;
  const std::filesystem::path base = std::filesystem::temp_directory_path(error);
  if (error) return;
  const UniqueFd dir(::open(base.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return;
  for (const auto& entry : std::filesystem::directory_iterator(base, error)) {
    const std::string name = entry.path().filename().string();
    constexpr std::string_view kPrefix = "jail-tmp-";
    if (!name.starts_with(kPrefix)) continue;
    const std::size_t dash = name.find('-', kPrefix.size());
    if (dash == std::string::npos) continue;
    const std::string pid = name.substr(kPrefix.size(), dash - kPrefix.size());
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    struct stat info {};
    if (::fstatat(dir.get(), name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISDIR(info.st_mode) || info.st_uid != ::geteuid())
      continue;
    // Its jail still runs (or the pid is another process's now): left alone.
    if (::access(("/proc/" + pid).c_str(), F_OK) == 0) continue;
    try {
      dry_run::remove_at(dir.get(), name);
    } catch (const Error&) {
      // Best effort: the next jail tries again.
    }
  }
}

std::vector<std::string> with_private_tmp(std::vector<std::string> env, const std::string& dir) {
  bool tmpdir = false;
  for (std::string& entry : env) {
    if (entry.starts_with("TMPDIR=")) {
      entry = "TMPDIR=" + dir;
      tmpdir = true;
    } else if (entry == "HOME=/tmp") {
      entry = "HOME=" + dir;
    }
  }
  if (!tmpdir) env.push_back("TMPDIR=" + dir);
  return env;
}

long landlock_abi_in_use() {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, 1 /* _VERSION */);
  long usable = abi > 0 ? abi : 0;
  if (const char* cap = std::getenv("JAIL_LANDLOCK_ABI_MAX"); cap != nullptr && *cap != '\0')
    usable = std::min(usable, std::strtol(cap, nullptr, 10));
  return usable;
}

LandlockRuleset make_landlock_ruleset(const Spec& spec, const std::string& private_tmp) {
  LandlockRuleset out;
  out.abi = landlock_abi_in_use();
  if (out.abi < 1) {
    throw Error("landlock", ENOSYS,
                "--isolation landlock: this kernel offers no Landlock (or it is disabled: see "
                "`cat /sys/kernel/security/lsm`); without it the tool's files cannot be confined");
  }
  if (out.abi < kLandlockSignalScopeAbi && spec.policy == kNoPolicy) {
    // Below ABI 6 the filter is what keeps the tool's signals in (seccomp/signal_check.hpp).
    throw Error("landlock", EINVAL,
                fmt::format("the Landlock mode cannot keep the tool's signals to its own "
                            "processes without a seccomp filter (--policy none) on this kernel "
                            "(Landlock ABI {}; ABI {} scopes them by itself)",
                            out.abi, kLandlockSignalScopeAbi));
  }
  const std::uint64_t fs = handled_fs(out.abi);
  out.refuses_tcp = out.abi >= 4 && spec.net == Net::none;
  out.scopes_signals = out.scopes_abstract_sockets = out.abi >= 6;
  const RulesetAttr attr{fs, out.refuses_tcp ? kNetBindTcp | kNetConnectTcp : 0,
                         out.abi >= 6 ? kScopeAbstract | kScopeSignal : 0};
  // The struct grew with the ABI: an older kernel takes only the fields it knows.
  const std::size_t size = out.abi >= 6   ? sizeof attr
                           : out.abi >= 4 ? 2 * sizeof(std::uint64_t)
                                          : sizeof(std::uint64_t);
  out.fd = UniqueFd(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0)));
  if (!out.fd.valid()) {
    throw Error("landlock", errno,
                fmt::format("cannot create the tool's Landlock ruleset: {}", std::strerror(errno)));
  }
  Builder builder(out.fd.get(), fs);
  const std::uint64_t read = kReadFile | kReadDir | kExecute;
  for (const char* dir : kSystemDirs) builder.grant(dir, read, true);
  for (const char* entry : kEtcEntries) builder.grant(std::string("/etc/") + entry, read, true);
  // The host's own: the mode has no /etc of its own to write them into.
  for (const char* entry : {"passwd", "group", "hosts", "resolv.conf"})
    builder.grant(std::string("/etc/") + entry, read, true);
  for (const char* name : kDevices)
    builder.grant(std::string("/dev/") + name, read | kWriteFile, true);
  builder.grant("/proc", read, false);
  builder.grant(private_tmp, fs, false);
  for (const Mount& mount : spec.mounts) {
    const std::uint64_t rights = mount.kind == MountKind::bind ? fs : read;
    // "/a/b/" and "/a/./b" are /a/b: the names below it must compare as the iterator gives them.
    const std::string source = host_path(mount.source);
    struct stat info {};
    if (::stat(source.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
      for (std::string& path :
           grant_around_secrets(builder, spec, source, rights, mount.follow_symlinks)) {
        if (std::find(out.masked.begin(), out.masked.end(), path) == out.masked.end())
          out.masked.push_back(std::move(path));
      }
    } else {
      builder.grant(source, rights, false, mount.follow_symlinks);
    }
  }
  return out;
}

}  // namespace jail
