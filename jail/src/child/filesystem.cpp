// Child side, after clone: no allocation, no exceptions, no logging. See plan.hpp.
//
// Bind sources are opened with the caller's rights: a root caller's by the parent before clone
// (bind_sources.hpp), as the child will have no rights on host paths; an unprivileged caller's
// here, with open_tree() while the host root is in view (the parent cannot copy a tree in a mount
// namespace it does not own), as is the runsc keeper's.
// Targets are resolved inside the new root with RESOLVE_BENEATH: a symlink that leads out of the
// root fails with EXDEV instead of redirecting a mount onto the host.
#include "child/filesystem.hpp"

#include <fcntl.h>
#include <linux/limits.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "child/fail.hpp"
#include "child/mount_attributes.hpp"
#include "child/syscalls.hpp"
#include "child/timing.hpp"

namespace jail::child {
namespace {

constexpr unsigned long long kBeneath = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;

int make_tmpfs(const char* size, const char* mode, unsigned attr) {
  const int fs = ::fsopen("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0) return -1;
  int mnt = -1;
  if ((size == nullptr || ::fsconfig(fs, FSCONFIG_SET_STRING, "size", size, 0) == 0) &&
      (mode == nullptr || ::fsconfig(fs, FSCONFIG_SET_STRING, "mode", mode, 0) == 0) &&
      ::fsconfig(fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) == 0) {
    mnt = ::fsmount(fs, FSMOUNT_CLOEXEC, attr);
  }
  const int saved = errno;
  ::close(fs);
  errno = saved;
  return mnt;
}

// A procfs of the pid namespace this process is PID 1 of. The kernel allows it inside a user
// namespace only while a full procfs is visible in the mount namespace, which is why it is made
// before the old root is detached.
int make_proc() {
  const int fs = ::fsopen("proc", FSOPEN_CLOEXEC);
  if (fs < 0) return -1;
  int mnt = -1;
  if (::fsconfig(fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) == 0) {
    mnt = ::fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  }
  const int saved = errno;
  ::close(fs);
  errno = saved;
  return mnt;
}

// The jail's own devpts instance (a mount inside a user namespace is always a new instance), so
// the tool's pty is not one of the host's.
int make_devpts() {
  const int fs = ::fsopen("devpts", FSOPEN_CLOEXEC);
  if (fs < 0) return -1;
  int mnt = -1;
  if (::fsconfig(fs, FSCONFIG_SET_FLAG, "newinstance", nullptr, 0) == 0 &&
      ::fsconfig(fs, FSCONFIG_SET_STRING, "ptmxmode", "0666", 0) == 0 &&
      ::fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0620", 0) == 0 &&
      ::fsconfig(fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) == 0) {
    mnt = ::fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
  }
  const int saved = errno;
  ::close(fs);
  errno = saved;
  return mnt;
}

// Resolves every directory of `path` but the last component inside `root`, creating missing ones.
// Returns an O_PATH fd of the parent directory and points *leaf at the last component inside
// `buffer`; -1 with errno on failure (EXDEV: a symlink leads out of the root).
int open_parent(int root, const char* path, char (&buffer)[PATH_MAX], const char** leaf) {
  const std::size_t length = std::strlen(path);
  if (length == 0 || length >= sizeof buffer) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(buffer, path, length + 1);
  int parent = ::fcntl(root, F_DUPFD_CLOEXEC, 0);
  char* component = buffer;
  for (char* slash = std::strchr(component, '/'); slash != nullptr;
       slash = std::strchr(component, '/')) {
    *slash = '\0';
    if (*component != '\0') {
      // Resolve the whole prefix from the root each time, so a relative symlink such as
      // lib -> usr/lib is followed the way the tool will see it, and one leading out is refused.
      int next = sys::openat2(root, buffer, O_PATH | O_DIRECTORY | O_CLOEXEC, kBeneath);
      if (next < 0 && errno == ENOENT) {
        if (::mkdirat(parent, component, 0755) != 0 && errno != EEXIST) {
          const int saved = errno;
          ::close(parent);
          errno = saved;
          return -1;
        }
        next = sys::openat2(root, buffer, O_PATH | O_DIRECTORY | O_CLOEXEC, kBeneath);
      }
      if (next < 0) {
        const int saved = errno;
        ::close(parent);
        errno = saved;
        return -1;
      }
      ::close(parent);
      parent = next;
    }
    *slash = '/';
    component = slash + 1;
  }
  *leaf = component;
  return parent;
}

// Creates the mount point (EEXIST is fine) and returns an O_PATH fd of it that is not a symlink.
int open_mount_point(int parent, const char* leaf, bool is_dir) {
  if (is_dir) {
    if (::mkdirat(parent, leaf, 0755) != 0 && errno != EEXIST) return -1;
    return sys::openat2(parent, leaf, O_PATH | O_CLOEXEC | O_NOFOLLOW,
                        kBeneath | RESOLVE_NO_SYMLINKS);
  }
  // A file that is there is used as it is: opening it to write could fail (a read-only file of
  // the jail's /proc) or block (a fifo).
  const int existing =
      sys::openat2(parent, leaf, O_PATH | O_CLOEXEC | O_NOFOLLOW, kBeneath | RESOLVE_NO_SYMLINKS);
  if (existing >= 0 || errno != ENOENT) return existing;
  const int fd = ::openat(parent, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno != EEXIST) return -1;
  if (fd >= 0) ::close(fd);
  return sys::openat2(parent, leaf, O_PATH | O_CLOEXEC | O_NOFOLLOW,
                      kBeneath | RESOLVE_NO_SYMLINKS);
}

int write_file(int parent, const char* leaf, const char* data, std::size_t length) {
  const int fd = ::openat(parent, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  std::size_t done = 0;
  while (done < length) {
    const ssize_t n = ::write(fd, data + done, length - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = n < 0 ? errno : EIO;
      ::close(fd);
      errno = saved;
      return -1;
    }
    done += static_cast<std::size_t>(n);
  }
  return ::close(fd);
}

// A dry run's layer: the host directory read through, writes kept in the session's upper dir.
// userxattr: inside a user namespace overlayfs may keep its whiteout and opaque marks only as
// user.overlay.* xattrs (trusted.* needs the host's CAP_SYS_ADMIN).
int make_overlay_of(const char* lower, const char* upper, const char* work) {
  const int fs = ::fsopen("overlay", FSOPEN_CLOEXEC);
  if (fs < 0) return -1;
  int mnt = -1;
  if (::fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", lower, 0) == 0 &&
      ::fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", upper, 0) == 0 &&
      ::fsconfig(fs, FSCONFIG_SET_STRING, "workdir", work, 0) == 0 &&
      ::fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", nullptr, 0) == 0 &&
      ::fsconfig(fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) == 0) {
    mnt = ::fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  }
  const int saved = errno;
  ::close(fs);
  errno = saved;
  return mnt;
}

int make_overlay(const MountOp& op) {
  return make_overlay_of(op.source, op.overlay_upper, op.overlay_work);
}

// `dir` + "/" + `name` into `out` (PATH_MAX), or false when it does not fit.
bool join_path(char* out, const char* dir, const char* name) {
  const std::size_t dir_length = std::strlen(dir);
  const std::size_t name_length = std::strlen(name);
  if (dir_length + 1 + name_length + 1 > PATH_MAX) return false;
  std::memcpy(out, dir, dir_length);
  out[dir_length] = '/';
  std::memcpy(out + dir_length + 1, name, name_length + 1);
  return true;
}

// A root caller's layer: the parent opened the lower directory and the session's layer
// directory (upper/ and work/) as idmapped trees, which overlayfs takes only from mounts of this
// namespace. So they are attached for a moment on a scratch tmpfs at the staging directory;
// overlayfs keeps its own private copies, and the scratch goes before the root is staged there.
int make_overlay_from_trees(const Plan& plan, MountOp& op) {
  char lower[PATH_MAX], layer[PATH_MAX], upper[PATH_MAX], work[PATH_MAX];
  if (!join_path(lower, plan.staging_dir, "lower") ||
      !join_path(layer, plan.staging_dir, "layer") || !join_path(upper, layer, "upper") ||
      !join_path(work, layer, "work")) {
    errno = ENAMETOOLONG;
    return -1;
  }
  const int scratch = make_tmpfs(nullptr, "0700", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (scratch < 0) return -1;
  int mnt = -1;
  if (::move_mount(scratch, "", AT_FDCWD, plan.staging_dir, MOVE_MOUNT_F_EMPTY_PATH) == 0) {
    if (::mkdir(lower, 0700) == 0 && ::mkdir(layer, 0700) == 0 &&
        ::move_mount(op.source_fd, "", AT_FDCWD, lower, MOVE_MOUNT_F_EMPTY_PATH) == 0 &&
        ::move_mount(op.overlay_layer_fd, "", AT_FDCWD, layer, MOVE_MOUNT_F_EMPTY_PATH) == 0) {
      mnt = make_overlay_of(lower, upper, work);
    }
    const int saved = errno;
    (void)::umount2(plan.staging_dir, MNT_DETACH);
    errno = saved;
  }
  const int saved = errno;
  ::close(scratch);
  ::close(op.source_fd);
  ::close(op.overlay_layer_fd);
  op.overlay_layer_fd = -1;
  errno = saved;
  return mnt;
}

// A capped dry run's layer (layer_store.hpp): its upper and work directories on the store,
// which is at the staging directory for the moment, and its lower tree (op.source_fd) attached
// there for the moment too (the staging directory may hold the host directory itself: /tmp).
// The upper's root takes the lower's mode and owner, as the merged root shows them (an owner
// the namespace does not map leaves it the tool's).
int make_stored_overlay(const Plan& plan, MountOp& op) {
  char lower[PATH_MAX], upper[PATH_MAX], work[PATH_MAX];
  int mnt = -1;
  if (!join_path(lower, plan.staging_dir, "lower") ||
      !join_path(upper, plan.staging_dir, op.overlay_upper) ||
      !join_path(work, plan.staging_dir, op.overlay_work)) {
    errno = ENAMETOOLONG;
  } else if (::mkdir(upper, 0700) == 0 && ::mkdir(work, 0700) == 0 && ::mkdir(lower, 0700) == 0) {
    if (::move_mount(op.source_fd, "", AT_FDCWD, lower, MOVE_MOUNT_F_EMPTY_PATH) == 0) {
      struct stat info {};
      if (::stat(lower, &info) == 0) {
        (void)::chown(upper, info.st_uid, info.st_gid);
        if (::chmod(upper, info.st_mode & 07777) == 0) mnt = make_overlay_of(lower, upper, work);
      }
      // overlayfs keeps its own copy of the lower tree: the store holds nothing of the host's.
      const int saved = errno;
      (void)::umount2(lower, MNT_DETACH);
      errno = saved;
    }
    const int saved = errno;
    (void)::rmdir(lower);
    errno = saved;
  }
  const int saved = errno;
  ::close(op.source_fd);
  errno = saved;
  return mnt;
}

// The store of a capped dry run, attached at the staging directory while the layers are made.
// An unprivileged caller's lower directories are opened first, as trees of their own, while the
// staging directory does not hide them.
int attach_layer_store(Plan& plan) {
  for (std::size_t i = 0; i < plan.op_count && !plan.sources_opened; ++i) {
    MountOp& op = plan.ops[i];
    if (op.kind != OpKind::overlay) continue;
    op.source_fd =
        ::open_tree(AT_FDCWD, op.source, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (op.source_fd < 0) fail(plan, Step::mount_overlay, errno, static_cast<int>(i));
  }
  const int store = make_tmpfs(plan.layer_store_size, "0700", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (store < 0) fail(plan, Step::layer_store, errno);
  if (::move_mount(store, "", AT_FDCWD, plan.staging_dir, MOVE_MOUNT_F_EMPTY_PATH) != 0)
    fail(plan, Step::layer_store, errno);
  return store;
}

// The parent copies the layers out of the store when the run ends: without it the tool's writes
// would be lost, so a store that cannot be sent ends the run. Detached here, it stays alive in
// the overlays and the parent's descriptor, and the root is staged where it was.
void release_layer_store(const Plan& plan, int store) {
  if (!send_fd(plan.report_fd, ReportKind::layer_store, store, -1))
    fail(plan, Step::layer_store, errno);
  if (::umount2(plan.staging_dir, MNT_DETACH) != 0) fail(plan, Step::layer_store, errno);
  ::close(store);
}

// A bind's source as a detached copy of its tree, sealed with the op's attributes before it is
// attached anywhere: op.source_fd, or -1 for an optional one that is missing. 0, or errno with
// `step` set.
int open_bind_source(MountOp& op, Step& step) {
  // A caller's bind may not go through a symbolic link (ELOOP): one the tool planted in an
  // earlier run would lead this one's bind anywhere the caller can reach.
  const int path = sys::openat2(AT_FDCWD, op.source, O_PATH | O_CLOEXEC,
                                op.follow_symlinks ? 0 : RESOLVE_NO_SYMLINKS);
  op.source_fd =
      path < 0 ? -1
               : ::open_tree(path, "",
                             AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (op.source_fd < 0) {
    const int err = errno;
    if (path >= 0) ::close(path);
    step = Step::open_bind_source;
    return op.optional && err == ENOENT ? 0 : err;
  }
  ::close(path);
  if (set_attributes(op.source_fd, bind_attributes(op), true) != 0) {
    step = Step::restrict_bind_source;
    return errno;
  }
  return 0;
}

// While the host root is in view: the sources are host paths. A root caller's binds come open
// from the parent (bind_sources.hpp).
void open_sources(Plan& plan) {
  const int store = plan.layer_store_size != nullptr ? attach_layer_store(plan) : -1;
  for (std::size_t i = 0; i < plan.op_count; ++i) {
    MountOp& op = plan.ops[i];
    const int detail = static_cast<int>(i);
    if (op.kind == OpKind::overlay) {
      if (op.overlay_made) continue;
      op.source_fd = store >= 0            ? make_stored_overlay(plan, op)
                     : plan.sources_opened ? make_overlay_from_trees(plan, op)
                                           : make_overlay(op);
      if (op.source_fd < 0) fail(plan, Step::mount_overlay, errno, detail);
      continue;
    }
    if (op.kind != OpKind::bind || plan.sources_opened) continue;
    Step step{};
    if (const int err = open_bind_source(op, step); err != 0) fail(plan, step, err, detail);
  }
  if (store >= 0) release_layer_store(plan, store);
}

// Mounts the new root at the staging directory and returns an O_PATH fd of it.
int stage_root(const Plan& plan) {
  int root_mount = -1;
  if (plan.rootfs_fd >= 0) {
    root_mount = plan.rootfs_fd;  // opened and sealed by the parent
  } else if (plan.rootfs_dir != nullptr) {
    root_mount =
        ::open_tree(AT_FDCWD, plan.rootfs_dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (root_mount < 0) fail(plan, Step::stage_root, errno);
    // A prepared root is the caller's directory: it is never written to.
    if (set_attributes(root_mount, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                       true) != 0) {
      fail(plan, Step::stage_root, errno);
    }
  } else {
    root_mount = make_tmpfs(plan.root_tmpfs_size, "0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    if (root_mount < 0) fail(plan, Step::stage_root, errno);
  }
  if (::move_mount(root_mount, "", AT_FDCWD, plan.staging_dir, MOVE_MOUNT_F_EMPTY_PATH) != 0) {
    fail(plan, Step::stage_root, errno);
  }
  ::close(root_mount);
  const int root = ::open(plan.staging_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) fail(plan, Step::stage_root, errno);
  return root;
}

void apply_op(Plan& plan, int root, std::size_t index) {
  MountOp& op = plan.ops[index];
  const int detail = static_cast<int>(index);
  if (op.kind == OpKind::bind && op.source_fd < 0) return;  // optional and absent

  char buffer[PATH_MAX];
  const char* leaf = nullptr;
  const int parent = open_parent(root, op.target, buffer, &leaf);
  if (parent < 0) fail(plan, Step::create_mount_target, errno, detail);

  switch (op.kind) {
    case OpKind::mkdir:
      if (::mkdirat(parent, leaf, 0755) != 0 && errno != EEXIST) {
        fail(plan, Step::create_mount_target, errno, detail);
      }
      break;
    case OpKind::symlink:
      if (::symlinkat(op.source, parent, leaf) != 0) fail(plan, Step::write_file, errno, detail);
      break;
    case OpKind::file:
      if (write_file(parent, leaf, op.source, op.source_len) != 0) {
        fail(plan, Step::write_file, errno, detail);
      }
      break;
    case OpKind::bind:
    case OpKind::overlay:
    case OpKind::tmpfs:
    case OpKind::proc:
    case OpKind::devpts: {
      const int target = open_mount_point(parent, leaf, op.target_is_dir);
      if (target < 0) fail(plan, Step::create_mount_target, errno, detail);
      int source = op.source_fd;
      if (op.kind == OpKind::tmpfs) {
        source = make_tmpfs(op.tmpfs_size, op.tmpfs_mode,
                            MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                (op.allow_exec ? 0u : unsigned{MOUNT_ATTR_NOEXEC}));
      } else if (op.kind == OpKind::proc) {
        source = make_proc();
      } else if (op.kind == OpKind::devpts) {
        source = make_devpts();
      }
      if (source < 0) fail(plan, Step::mount, errno, detail);
      if (::move_mount(source, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) !=
          0) {
        fail(plan, Step::mount, errno, detail);
      }
      // The parent keeps the tool's writable tmpfs mounts, to say at the end which filled up
      // (fstatfs still reads one after the jail's mount namespace is gone). Best effort: a
      // report that cannot be sent costs only that line.
      if (op.kind == OpKind::tmpfs && !op.read_only) {
        (void)send_fd(plan.report_fd, ReportKind::tmpfs, source, detail);
      }
      // Its writable filesystems are the jail's own: a socket made there is the jail's, which
      // the supervisor lets the tool connect to (seccomp/connect_broker.hpp). Not sent, a
      // layer's sockets are refused as the host's: the failure is closed.
      if (op.kind == OpKind::overlay)
        (void)send_fd(plan.report_fd, ReportKind::layer, source, detail);
      ::close(source);
      op.source_fd = -1;
      ::close(target);
      break;
    }
  }
  ::close(parent);
}

// tmpfs mounts marked read-only (e.g. /dev) are populated first and sealed here; binds were
// sealed before they were attached.
void seal_read_only(const Plan& plan, int root) {
  for (std::size_t i = 0; i < plan.op_count; ++i) {
    const MountOp& op = plan.ops[i];
    if (op.kind != OpKind::tmpfs || !op.read_only) continue;
    const int fd = sys::openat2(root, op.target, O_PATH | O_DIRECTORY | O_CLOEXEC,
                                kBeneath | RESOLVE_NO_SYMLINKS);
    if (fd < 0 || set_attributes(fd, MOUNT_ATTR_RDONLY, false) != 0) {
      fail(plan, Step::make_read_only, errno, static_cast<int>(i));
    }
    ::close(fd);
  }
  if (plan.rootfs_dir == nullptr && set_attributes(root, MOUNT_ATTR_RDONLY, false) != 0) {
    fail(plan, Step::make_read_only, errno);
  }
}

}  // namespace

int bind_beneath(int root, MountOp& op, Step& step) {
  if (const int err = open_bind_source(op, step); err != 0 || op.source_fd < 0) return err;
  char buffer[PATH_MAX];
  const char* leaf = nullptr;
  int err = 0;
  const int parent = open_parent(root, op.target, buffer, &leaf);
  const int target = parent < 0 ? -1 : open_mount_point(parent, leaf, op.target_is_dir);
  if (target < 0) {
    err = errno;
    step = Step::create_mount_target;
  } else if (::move_mount(op.source_fd, "", target, "",
                          MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
    err = errno;
    step = Step::mount;
  }
  if (target >= 0) ::close(target);
  if (parent >= 0) ::close(parent);
  ::close(op.source_fd);
  op.source_fd = -1;
  return err;
}

void build_root(Plan& plan) {
  // Nothing done here may propagate back to the host's mounts.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    fail(plan, Step::mount_private, errno);
  }
  open_sources(plan);
  const int root = stage_root(plan);
  for (std::size_t i = 0; i < plan.op_count; ++i) apply_op(plan, root, i);
  seal_read_only(plan, root);
  mark(plan, Phase::mounts_done);

  // pivot_root(".", ".") stacks the old root on top of the new one; detaching it leaves the new
  // root alone, with no path back to the host's tree.
  if (::fchdir(root) != 0) fail(plan, Step::pivot_root, errno);
  if (sys::pivot_root(".", ".") != 0) fail(plan, Step::pivot_root, errno);
  if (::umount2(".", MNT_DETACH) != 0) fail(plan, Step::detach_old_root, errno);
  if (::chdir("/") != 0) fail(plan, Step::pivot_root, errno);
  ::close(root);
  mark(plan, Phase::pivot_root_done);
}

}  // namespace jail::child
