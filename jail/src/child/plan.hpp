// What the child side of clone needs, prepared by the parent as plain arrays and C strings.
// Post-clone code reads this and nothing else: no allocation, no exceptions, no logging.
#pragma once

#include <linux/filter.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace jail::child {

enum class OpKind : std::uint8_t {
  bind,     // open_tree(source) before the root changes, attached at target
  tmpfs,    // a fresh tmpfs at target
  proc,     // a fresh procfs of the new pid namespace at target
  devpts,   // a devpts instance of the jail's own at target (for its pty)
  mkdir,    // an empty directory (a mount point the tool may see)
  symlink,  // target -> source (the link text)
  file,     // a file at target holding source[0..source_len)
  overlay,  // dry run: source is the lower layer, overlay_upper/overlay_work the session's dirs
};

// Whether an op of this kind mounts a file system at its target; the others (mkdir, symlink,
// file) make an entry in whatever holds the target. A switch with no default, so that -Wswitch
// makes whoever adds a kind decide which it is.
[[nodiscard]] constexpr bool is_mount(OpKind kind) {
  switch (kind) {
    case OpKind::bind:
    case OpKind::tmpfs:
    case OpKind::proc:
    case OpKind::devpts:
    case OpKind::overlay:
      return true;
    case OpKind::mkdir:
    case OpKind::symlink:
    case OpKind::file:
      return false;
  }
  return true;  // not reached for a valid kind; an unknown one is treated as the stricter case
}

struct MountOp {
  OpKind kind = OpKind::mkdir;
  const char* source = nullptr;
  std::size_t source_len = 0;
  const char* target = nullptr;      // relative to the new root, no leading '/'
  bool read_only = true;             // applied recursively
  bool allow_devices = false;        // device-node binds keep device access
  bool allow_exec = true;            // procfs and /dev are mounted noexec
  bool optional = false;             // a missing source is skipped, not an error
  bool target_is_dir = true;         // mount point to create: a directory or an empty file
  const char* tmpfs_size = nullptr;  // decimal bytes, for fsconfig
  const char* tmpfs_mode = nullptr;  // octal, for fsconfig
  const char* overlay_upper = nullptr;
  const char* overlay_work = nullptr;
  bool follow_symlinks = true;  // a bind's source may go through links (jail's own binds)
  bool idmap = false;  // a caller's bind or dry-run layer: a root caller's tool sees it as its own
  // A bind's source as a detached mount, opened by the parent before clone (bind_sources.hpp);
  // an overlay's, made by the child. -1 for an optional bind whose source is missing.
  int source_fd = -1;
  // A root caller's dry-run layer: the parent's idmapped tree of the directory that holds
  // overlay_upper and overlay_work (source_fd then holds the lower directory's).
  int overlay_layer_fd = -1;
  // A root caller's dry-run layer, made whole by the parent (layer_overlay.hpp): source_fd is
  // the overlay, attached as a bind's tree is.
  bool overlay_made = false;
};

struct RlimitSetting {
  int resource;
  rlim_t soft;
  rlim_t hard;
};

// Where the tool finds jail's egress proxy in its own network (HTTP_PROXY): squid's port, which
// proxy-aware tools and their users recognise.
inline constexpr std::uint16_t kEgressProxyPort = 3128;

// The Landlock ABI that scopes abstract Unix sockets (Linux 6.12).
inline constexpr long kLandlockAbiAbstractScope = 6;

// A per-user-namespace limit (/proc/sys/user/NAME) the init sets in the jail's namespace.
struct QuotaSetting {
  const char* path = nullptr;  // "/proc/sys/user/max_inotify_instances"
  const char* value = nullptr;
  std::size_t value_len = 0;
};

struct Plan {
  MountOp* ops = nullptr;
  std::size_t op_count = 0;

  const char* rootfs_dir = nullptr;  // null: a fresh tmpfs root
  int rootfs_fd = -1;                // rootfs_dir as a detached read-only mount, the parent's
  // A root caller's parent opened every bind source (and the rootfs) before clone; otherwise
  // the child opens them, with the same rights: the caller's own uid.
  bool sources_opened = false;
  const char* root_tmpfs_size = nullptr;
  const char* staging_dir = nullptr;  // where the new root is assembled before pivot_root
  // A capped dry run: the size (decimal bytes) of the tmpfs that holds every layer's upper and
  // work directories; overlay ops then name directories in it (layer_store.hpp).
  const char* layer_store_size = nullptr;

  const char* hostname = nullptr;
  std::size_t hostname_len = 0;
  bool new_net = true;
  // Spec::net_allow: the init listens at 127.0.0.1:kEgressProxyPort in the tool's network and
  // hands the listener to the parent, whose egress proxy serves it from the host side.
  bool egress_listener = false;
  const char* cwd = nullptr;

  uid_t uid = 0;
  gid_t gid = 0;
  bool may_setgroups = false;  // only when the parent could leave /proc/PID/setgroups at "allow"
  int cap_last_cap = 40;

  const RlimitSetting* rlimits = nullptr;  // set in the tool right before execve
  std::size_t rlimit_count = 0;
  const QuotaSetting* quotas = nullptr;  // set by the init in the jail's user namespace
  std::size_t quota_count = 0;

  const sock_fprog* seccomp_program = nullptr;  // installed in the tool right before execve
  // The program sends exit_group to the supervisor (seccomp/exit_watch.hpp): a failed start
  // ends with exit, which the policy then allows plainly, instead.
  bool exits_watched = false;
  // Landlock ABI 6+: the tool reaches only abstract Unix sockets made inside its own domain (the
  // host's, with --net host, are refused). The parent checks the ABI; false on older kernels.
  bool scope_abstract_sockets = false;
  // The Landlock mode (Spec::isolation): no namespaces, so no identity to take, no root to
  // build; the init ends every descendant itself (it is their subreaper), and the tool confines
  // itself with this ruleset (the parent's, inherited) just before its seccomp filter.
  bool landlock = false;
  int landlock_ruleset_fd = -1;

  // When set, the tool's stdio fds in pty_fds (bit n = fd n) are the slave of a pty allocated
  // inside the jail; the master goes to the parent, which relays it to the caller's terminal.
  bool pty = false;
  unsigned pty_fds = 0;

  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* path_env = nullptr;  // PATH value used to find argv[0]

  // Descriptors that become the tool's 0/1/2 (-1: keep the inherited one); "none" input is an
  // open /dev/null here.
  int stdio_fds[3] = {-1, -1, -1};

  // The caller's own argv and environ strings (this process's memory, copied by clone): wiped by
  // the init first thing, so /proc/1/cmdline inside shows nothing of the caller's command line.
  char* caller_args = nullptr;
  std::size_t caller_args_len = 0;
  char* caller_env = nullptr;
  std::size_t caller_env_len = 0;

  // v1 cgroups: the `tasks` file of each hierarchy, open for writing; the init writes "0" to
  // each right after the go byte, before anything else, and closes them.
  static constexpr std::size_t kMaxCgroupTasks = 16;
  // Bind sources the child inherits open (MountOp::source_fd); launch() refuses more.
  static constexpr std::size_t kMaxBindSources = 512;
  int cgroup_tasks_fds[kMaxCgroupTasks] = {};
  std::size_t cgroup_tasks_count = 0;

  bool trace_timing = false;  // send a timing record at each Phase (child/timing.hpp)

  int go_fd = -1;      // parent -> child: one byte when uid/gid maps are written; EOF = parent gone
  int report_fd = -1;  // child -> parent: Report records
};

// Binds made into a directory of the host instead of a new root: runsc's process makes those of
// `ops` with host_side[i] set inside a run bundle's rootfs, before its exec (oci::RunBundle).
struct HostBinds {
  const char* root_dir = nullptr;
  MountOp* ops = nullptr;
  const bool* host_side = nullptr;
  std::size_t op_count = 0;
};

// Entry point of the cloned child (PID 1 of the new pid namespace). Never returns.
[[noreturn]] void run(Plan& plan);

}  // namespace jail::child
