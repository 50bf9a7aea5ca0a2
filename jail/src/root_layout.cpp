#include "root_layout.hpp"

#include "spec_check.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace jail {
namespace {

constexpr std::uint64_t kDevShmBytes = 64ull << 20;
constexpr std::uint64_t kDevBytes = 64ull << 10;

// The paths the caller's own mounts take, as check_spec read them ("/data/" is /data).
std::vector<std::string> mount_targets(const Spec& spec) {
  std::vector<std::string> targets;
  for (const Mount& mount : spec.mounts) targets.push_back(normalize_jail_path(mount.target));
  return targets;
}

// Recreates a host symlink, or binds the entry read-only, or does nothing if it is absent — or
// when one of the caller's mounts takes that very path: then the caller's file or directory is
// what the tool should see there, and jail's copy of the host's entry would only be in the way
// (a symlink such as /etc/localtime or /bin cannot be mounted over at all).
void mirror(PlanBuilder& builder, const std::string& path, const std::vector<std::string>& taken) {
  if (std::find(taken.begin(), taken.end(), path) != taken.end()) return;
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return;
  if (S_ISLNK(info.st_mode)) {
    std::error_code error;
    const auto link = std::filesystem::read_symlink(path, error);
    if (!error) builder.symlink(path, link.string());
    return;
  }
  builder.optional_bind(path, path);
}

std::string passwd_for(const Identity& identity) {
  std::string text;
  if (identity.uid != 0) text += "root:x:0:0:root:/root:/usr/sbin/nologin\n";
  text += fmt::format("{}:x:{}:{}:{}:/tmp:/bin/sh\n", identity.user_name, identity.uid,
                      identity.gid, identity.user_name);
  if (identity.uid != 65534) text += "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
  return text;
}

std::string group_for(const Identity& identity) {
  std::string text;
  if (identity.gid != 0) text += "root:x:0:\n";
  text += fmt::format("{}:x:{}:\n", identity.gid == 0 ? "root" : "jail", identity.gid);
  if (identity.gid != 65534) text += "nogroup:x:65534:\n";
  return text;
}

void add_host_minimal(PlanBuilder& builder, const Spec& spec, const Identity& identity) {
  const std::vector<std::string> taken = mount_targets(spec);
  for (const char* dir : kSystemDirs) mirror(builder, dir, taken);
  builder.mkdir("/etc");
  for (const char* entry : kEtcEntries) mirror(builder, std::string("/etc/") + entry, taken);
  if (spec.net == Net::host) mirror(builder, "/etc/resolv.conf", taken);
  builder.file("/etc/passwd", passwd_for(identity));
  builder.file("/etc/group", group_for(identity));
  builder.file("/etc/hostname", spec.hostname + "\n");
  builder.file("/etc/hosts",
               fmt::format("127.0.0.1\tlocalhost\n::1\tlocalhost\n127.0.1.1\t{}\n", spec.hostname));
}

void add_dev(PlanBuilder& builder, const Spec& spec) {
  // Sealed read-only once populated; the nodes are binds of the host's, the only way to get
  // device nodes inside a user namespace.
  builder.tmpfs("/dev", kDevBytes, 0755, true, false, "the jail's /dev");
  for (const char* name : kDevices) builder.device(name);
  builder.symlink("/dev/fd", "/proc/self/fd");
  builder.symlink("/dev/stdin", "/proc/self/fd/0");
  builder.symlink("/dev/stdout", "/proc/self/fd/1");
  builder.symlink("/dev/stderr", "/proc/self/fd/2");
  builder.tmpfs("/dev/shm", kDevShmBytes, 01777, false, false, "the jail's /dev/shm");
  if (spec.stdio == Stdio::pty) {
    builder.devpts("/dev/pts");
    builder.symlink("/dev/ptmx", "pts/ptmx");
  }
}

// Each credential store at the top of the bound directory `source` (shown at `target`) is covered
// by an empty read-only entry: a directory by an empty tmpfs, a file by /dev/null. A link is
// left alone: it resolves inside the jail, where a bind it leads into masks its own.
void mask_secrets(PlanBuilder& builder, const std::string& source, const std::string& target,
                  const std::vector<std::string>& unmask, std::vector<std::string>& masked) {
  struct stat info {};
  if (::stat(source.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return;
  for (const std::string_view name : kMaskedSecrets) {
    const std::string host = (std::filesystem::path(source) / name).lexically_normal().string();
    if (::lstat(host.c_str(), &info) != 0) continue;
    if (std::find(unmask.begin(), unmask.end(), host) != unmask.end()) continue;
    const std::string inside = (std::filesystem::path(target) / name).lexically_normal().string();
    const std::string origin = "the credential store " + host + " masked (--unmask shows it)";
    if (S_ISDIR(info.st_mode)) {
      builder.tmpfs(inside, 4096, 0500, true, false, origin);
    } else if (S_ISREG(info.st_mode)) {
      builder.mask_file(inside, origin);
    } else {
      continue;
    }
    masked.push_back(host);
  }
}

}  // namespace

std::vector<std::string> add_root_layout(PlanBuilder& builder, const Spec& spec,
                                         const Identity& identity,
                                         const dry_run::Recorder* dry_run) {
  std::vector<std::string> masked;
  if (!spec.rootfs) add_host_minimal(builder, spec, identity);
  builder.proc("/proc");
  // The keys of every uid the tool shares (an unprivileged caller's own) are listed there by
  // name; both read as empty. A masked procfs can't be mounted again inside (the kernel wants
  // it whole), so a tool that nests jails asks for it whole with --unmask /proc/keys.
  if (std::find(spec.unmask.begin(), spec.unmask.end(), "/proc/keys") == spec.unmask.end()) {
    builder.mask_file("/proc/keys", "the jail's /proc, keys masked (--unmask /proc/keys)");
    builder.mask_file("/proc/key-users", "the jail's /proc, keys masked (--unmask /proc/keys)");
  }
  add_dev(builder, spec);
  builder.tmpfs("/tmp", spec.tmp_size_bytes, 01777, false, true, "the jail's /tmp");
  for (std::size_t i = 0; i < spec.mounts.size(); ++i) {
    const Mount& mount = spec.mounts[i];
    // As check_spec read it: "/data/" (a shell's completion) is /data, not an empty last name.
    const std::string target = normalize_jail_path(mount.target);
    const dry_run::Layer* layer = dry_run != nullptr ? dry_run->layer_for_mount(i) : nullptr;
    if (layer != nullptr) {
      builder.overlay(layer->lower, layer->upper, layer->work, target, mount.origin + ", dry run");
      mask_secrets(builder, mount.source, target, spec.unmask, masked);
      continue;
    }
    switch (mount.kind) {
      case MountKind::bind:
      case MountKind::ro_bind:
        builder.bind_of_caller(mount.source, target, mount.kind == MountKind::ro_bind, mount.origin,
                               mount.follow_symlinks);
        mask_secrets(builder, mount.source, target, spec.unmask, masked);
        break;
      case MountKind::tmpfs:
        builder.tmpfs(target, mount.size_bytes.value_or(spec.tmp_size_bytes), 01777, false, true,
                      mount.origin);
        break;
    }
  }
  return masked;
}

}  // namespace jail
