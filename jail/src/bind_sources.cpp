#include "bind_sources.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "child/mount_attributes.hpp"
#include "child/report.hpp"
#include "jail/error.hpp"
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

}  // namespace

std::vector<UniqueFd> open_bind_sources(child::Plan& plan, const FailureContext& context) {
  std::vector<UniqueFd> opened;
  // Copying a tree takes CAP_SYS_ADMIN over the caller's mount namespace: a root caller's.
  if (::geteuid() != 0) return opened;
  plan.sources_opened = true;
  for (std::size_t i = 0; i < plan.op_count; ++i) {
    child::MountOp& op = plan.ops[i];
    if (op.kind != child::OpKind::bind) continue;
    if (opened.size() == child::Plan::kMaxBindSources) {
      throw Error("open_bind_source", E2BIG,
                  fmt::format("the jail has more than {} binds; bind a common parent directory",
                              child::Plan::kMaxBindSources));
    }
    const UniqueFd path = open_source_path(op);
    if (!path.valid()) {
      const int err = errno;
      if (op.optional && err == ENOENT) continue;
      fail_like_child(Step::open_bind_source, err, i, context);
    }
    struct stat info {};
    if (::fstat(path.get(), &info) == 0) op.target_is_dir = S_ISDIR(info.st_mode);
    UniqueFd tree = detached_copy(path.get());
    if (!tree.valid()) fail_like_child(Step::open_bind_source, errno, i, context);
    if (child::set_attributes(tree.get(), child::bind_attributes(op), true) != 0) {
      fail_like_child(Step::restrict_bind_source, errno, i, context);
    }
    op.source_fd = tree.get();
    opened.push_back(std::move(tree));
  }
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
