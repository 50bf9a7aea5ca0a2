#include "bind_sources.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "child/mount_attributes.hpp"
#include "child/report.hpp"
#include "idmap.hpp"
#include "jail/error.hpp"
#include "layer_overlay.hpp"
#include "setup_failure.hpp"
#include "step.hpp"

namespace jail {
namespace {

[[noreturn]] void fail_like_child(Step step, int err, std::size_t index,
                                  const FailureContext& context) {
  const child::Report report{child::ReportKind::setup_failed, static_cast<std::int32_t>(step), err,
                             static_cast<std::int32_t>(index)};
  SetupFailure failure = describe_setup_failure(report, context);
  throw Error(failure.step, failure.errno_value, failure.message);
}

// The source itself, not yet a mount: O_PATH, links followed only where the op allows them
// (child/filesystem.cpp's open_bind_source says why).
UniqueFd open_source_path(const child::MountOp& op) {
  return UniqueFd(child::sys::openat2(AT_FDCWD, op.source, O_PATH | O_CLOEXEC,
                                      op.follow_symlinks ? 0 : RESOLVE_NO_SYMLINKS));
}

UniqueFd detached_copy(int path_fd) {
  return UniqueFd(
      ::open_tree(path_fd, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
}

// The session's directory that holds the layer's upper/ and work/, open.
UniqueFd open_layer_dir(const child::MountOp& op, std::size_t index,
                        const FailureContext& context) {
  const std::string upper = op.overlay_upper;
  const std::string work = op.overlay_work;
  const std::string dir = upper.substr(0, upper.rfind('/'));
  if (dir.empty() || work.substr(0, work.rfind('/')) != dir) {
    fail_like_child(Step::mount_overlay, EINVAL, index, context);
  }
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd.valid()) fail_like_child(Step::mount_overlay, errno, index, context);
  return fd;
}

// The filesystem type of the mount `fd` is on ("ext4"), from /proc: for the idmap error.
std::string filesystem_of(int fd) {
  std::ifstream fdinfo(fmt::format("/proc/self/fdinfo/{}", fd));
  std::string mount_id;
  for (std::string line; std::getline(fdinfo, line);) {
    if (line.starts_with("mnt_id:")) mount_id = line.substr(line.find_first_not_of(" \t", 7));
  }
  std::ifstream mountinfo("/proc/self/mountinfo");
  for (std::string line; std::getline(mountinfo, line);) {
    if (mount_id.empty() || !line.starts_with(mount_id + " ")) continue;
    const std::size_t dash = line.find(" - ");
    if (dash == std::string::npos) break;
    const std::size_t start = dash + 3;
    return line.substr(start, line.find(' ', start) - start);
  }
  return "unknown";
}

// Shows the tree to the tool as its own: the bound directory's owner becomes the tool.
void idmap_tree(int tree, int path, const struct stat& owner, IdmapNamespaces& namespaces,
                const child::MountOp& op, const OpDescription& description) {
  mount_attr request{};
  request.attr_set = MOUNT_ATTR_IDMAP;
  request.userns_fd = static_cast<std::uint64_t>(namespaces.for_owner(owner.st_uid, owner.st_gid));
  if (::mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &request, sizeof request) == 0) {
    return;
  }
  const int err = errno;
  throw Error(
      "idmap", err,
      fmt::format("cannot mount {} at {}: {}: {}: jail shows a root caller's bind to the tool as "
                  "its own with an idmapped mount, and {} (or a mount below it) cannot be "
                  "idmapped{}. Bind a directory on another filesystem (ext4, xfs, btrfs, tmpfs), "
                  "or run jail as the directory's owner instead of root{}",
                  op.source, description.target, strerrorname_np(err), std::strerror(err),
                  op.source, path >= 0 ? " (" + filesystem_of(path) + ")" : "",
                  description.origin.empty() ? "" : " (from " + description.origin + ")"));
}

// A dry run's layer for a root caller, made here (layer_overlay.hpp) over `lower`, the host
// directory's tree: its upper and work directories on the store (made at the first layer) or in
// the session's layer directory. Neither is idmapped: overlayfs writes there with the rights of
// whoever made it (root here), which an idmapping that maps only the tool would refuse
// (EOVERFLOW). The upper's root, which the merged root shows, is the host directory's owner as
// the tool sees it.
UniqueFd make_layer_here(const child::Plan& plan, const child::MountOp& op, std::size_t index,
                         int lower, UniqueFd& store, const FailureContext& context) {
  UniqueFd holder;
  const char* upper_name = "upper";
  const char* work_name = "work";
  if (plan.layer_store_size != nullptr) {
    if (!store.valid()) store = make_layer_store(std::stoull(plan.layer_store_size));
    if (!store.valid()) fail_like_child(Step::layer_store, errno, index, context);
    upper_name = op.overlay_upper;
    work_name = op.overlay_work;
    if (::mkdirat(store.get(), upper_name, 0700) != 0 ||
        ::mkdirat(store.get(), work_name, 0700) != 0) {
      fail_like_child(Step::layer_store, errno, index, context);
    }
    holder = UniqueFd(::dup(store.get()));
  } else {
    holder = detached_copy(open_layer_dir(op, index, context).get());
    if (!holder.valid()) fail_like_child(Step::mount_overlay, errno, index, context);
  }
  struct stat seen {};
  if (::fstat(lower, &seen) != 0 ||
      ::fchownat(holder.get(), upper_name, seen.st_uid, seen.st_gid, AT_SYMLINK_NOFOLLOW) != 0 ||
      ::fchmodat(holder.get(), upper_name, seen.st_mode & 07777, 0) != 0) {
    fail_like_child(Step::mount_overlay, errno, index, context);
  }
  const UniqueFd upper(
      ::openat(holder.get(), upper_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  const UniqueFd work(
      ::openat(holder.get(), work_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!upper.valid() || !work.valid()) fail_like_child(Step::mount_overlay, errno, index, context);
  UniqueFd overlay = make_layer_overlay(lower, upper.get(), work.get());
  if (!overlay.valid()) fail_like_child(Step::mount_overlay, errno, index, context);
  return overlay;
}

}  // namespace

std::vector<UniqueFd> open_bind_sources(child::Plan& plan, const FailureContext& context,
                                        UniqueFd& layer_store) {
  std::vector<UniqueFd> opened;
  // Copying a tree takes CAP_SYS_ADMIN over the caller's mount namespace: a root caller's.
  if (::geteuid() != 0) return opened;
  plan.sources_opened = true;
  IdmapNamespaces namespaces(context.identity.host_uid);
  for (std::size_t i = 0; i < plan.op_count; ++i) {
    child::MountOp& op = plan.ops[i];
    if (op.kind != child::OpKind::bind && op.kind != child::OpKind::overlay) continue;
    if (opened.size() == child::Plan::kMaxBindSources) {
      throw Error("open_bind_source", E2BIG,
                  fmt::format("the jail has more than {} binds; bind a common parent directory",
                              child::Plan::kMaxBindSources));
    }
    const UniqueFd path = open_source_path(op);
    if (!path.valid()) {
      const int err = errno;
      if (op.optional && err == ENOENT) continue;
      fail_like_child(
          op.kind == child::OpKind::overlay ? Step::mount_overlay : Step::open_bind_source, err, i,
          context);
    }
    struct stat owner {};
    if (::fstat(path.get(), &owner) != 0)
      fail_like_child(Step::open_bind_source, errno, i, context);
    if (op.kind == child::OpKind::bind) op.target_is_dir = S_ISDIR(owner.st_mode);
    UniqueFd tree = detached_copy(path.get());
    if (!tree.valid()) fail_like_child(Step::open_bind_source, errno, i, context);
    const bool overlay = op.kind == child::OpKind::overlay;
    const bool idmapped =
        op.idmap && (overlay ? context.identity.idmap_layers : context.identity.idmap_binds);
    if (idmapped) idmap_tree(tree.get(), path.get(), owner, namespaces, op, context.ops[i]);
    if (overlay && layer_overlays_possible()) {
      UniqueFd made = make_layer_here(plan, op, i, tree.get(), layer_store, context);
      op.overlay_made = true;
      op.source_fd = made.get();
      opened.push_back(std::move(made));
      continue;
    }
    // A capped dry run's upper and work directories are on the child's own store instead.
    if (overlay && plan.layer_store_size == nullptr) {
      // The child makes the overlay in its own namespace from the lower tree and this one, the
      // session's directory of upper/ and work/ (overlayfs wants both on one mount).
      UniqueFd layer = open_layer_dir(op, i, context);
      if (idmapped) {
        // The layer is the lower directory's owner's, mapped as the lower is: the tool's writes
        // land in the session as they will on the host at commit. The session directory above
        // stays the caller's alone (0700).
        for (const char* name : {".", "upper", "work"}) {
          if (::fchownat(layer.get(), name, owner.st_uid, owner.st_gid, AT_SYMLINK_NOFOLLOW) != 0)
            fail_like_child(Step::mount_overlay, errno, i, context);
        }
      }
      UniqueFd layer_tree = detached_copy(layer.get());
      if (!layer_tree.valid()) fail_like_child(Step::mount_overlay, errno, i, context);
      if (idmapped)
        idmap_tree(layer_tree.get(), layer.get(), owner, namespaces, op, context.ops[i]);
      op.overlay_layer_fd = layer_tree.get();
      opened.push_back(std::move(layer_tree));
    }
    if (op.kind == child::OpKind::bind &&
        child::set_attributes(tree.get(), child::bind_attributes(op), true) != 0) {
      fail_like_child(Step::restrict_bind_source, errno, i, context);
    }
    op.source_fd = tree.get();
    opened.push_back(std::move(tree));
  }
  // Every layer is on the store made here: the child makes none.
  if (layer_store.valid()) plan.layer_store_size = nullptr;
  if (plan.rootfs_dir != nullptr) {
    const UniqueFd path(::open(plan.rootfs_dir, O_PATH | O_DIRECTORY | O_CLOEXEC));
    UniqueFd tree = path.valid() ? detached_copy(path.get()) : UniqueFd();
    // A prepared root is the caller's directory: it is never written to.
    if (!tree.valid() ||
        child::set_attributes(tree.get(), MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                              true) != 0) {
      fail_like_child(Step::stage_root, errno, 0, context);
    }
    plan.rootfs_fd = tree.get();
    opened.push_back(std::move(tree));
  }
  return opened;
}

}  // namespace jail
