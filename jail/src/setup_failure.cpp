#include "setup_failure.hpp"

#include <sys/resource.h>
#include <sys/stat.h>

#include "child/exec.hpp"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "jail/limits.hpp"
#include "step.hpp"
#include "userns_probe.hpp"

namespace jail {
namespace {

std::string errno_text(int err) {
  const char* name = strerrorname_np(err);
  return fmt::format("{}: {}", name != nullptr ? name : std::to_string(err), std::strerror(err));
}

std::string origin_of(const OpDescription& op) {
  return op.origin.empty() ? "" : fmt::format(" (from {})", op.origin);
}

// A bind refused with EINVAL by mount(2) itself, most often because the target jail found is of
// the other type than the source (jail makes a missing target of the source's type). The jail's
// root shows the host's paths (or the --rootfs's), so the target is looked at there; when the
// types agree, EINVAL had another cause and no hint is given rather than a wrong one.
std::string type_mismatch_hint(const std::string& source, const std::string& target_seen) {
  struct stat from {
  }, to{};
  if (::stat(source.c_str(), &from) != 0 || ::stat(target_seen.c_str(), &to) != 0) return "";
  if (S_ISDIR(from.st_mode) == S_ISDIR(to.st_mode)) return "";
  return S_ISDIR(from.st_mode) ? ": the source is a directory and the target in the jail is not "
                                 "(a directory mounts only on a directory)"
                               : ": the source is a file and the target in the jail is a "
                                 "directory (a file mounts only on a file)";
}

// The first symbolic link on the way to `path`, as written: "/srv/data" of "/srv/data/x".
std::string first_link_in(const std::string& path) {
  std::filesystem::path prefix;
  for (const auto& part : std::filesystem::path(path)) {
    prefix /= part;
    struct stat info {};
    if (::lstat(prefix.c_str(), &info) == 0 && S_ISLNK(info.st_mode)) return prefix.string();
  }
  return {};
}

}  // namespace

std::string link_in_bind_source(const std::string& source) {
  const std::string link = first_link_in(source);
  std::error_code error;
  const std::string leads_to = link.empty() ? "" : std::filesystem::read_symlink(link, error);
  const std::string real = std::filesystem::canonical(source, error);
  return fmt::format(
      "{} is a symbolic link{}; jail does not follow links in a bind's source, where a tool "
      "that could write there may have planted one. Bind the real path{}, or pass --bind-follow "
      "(Mount::follow_symlinks) to follow it",
      link.empty() ? source : link, leads_to.empty() ? "" : " to " + leads_to,
      real.empty() ? "" : " (" + real + ")");
}

namespace {

std::string mount_hint(Step step, int err, const OpDescription& op, const FailureContext& context) {
  if (step == Step::mount && err == EINVAL && !op.source.empty() && op.source.front() == '/') {
    return type_mismatch_hint(op.source, context.rootfs + op.target);
  }
  if (step == Step::create_mount_target && err == ENOENT && op.target.starts_with("/proc/")) {
    return ": /proc is the jail's own procfs, where no new path can be made; mount elsewhere";
  }
  if (step == Step::create_mount_target && err == EROFS) {
    return context.rootfs.empty()
               ? ": the mount point does not exist and its parent is a read-only part of the "
                 "jail's root (the host's own, bound in); mount at a new path such as /data, or "
                 "under /tmp"
               : fmt::format(
                     ": the mount point does not exist and its parent is read-only; create it in "
                     "{}, or mount under /tmp",
                     context.rootfs);
  }
  if (step == Step::open_bind_source && err == ENOENT) return ": the source does not exist";
  if (step == Step::open_bind_source && err == ELOOP && !op.follow_symlinks) {
    return ": " + link_in_bind_source(op.source);
  }
  if (step == Step::open_bind_source && err == EACCES) {
    return ": jail opens a bind's source with the caller's own rights, and the caller cannot "
           "reach this one; bind a path the caller can read";
  }
  if (step == Step::create_mount_target && err == EXDEV) {
    return ": the target path goes through a symlink that leads out of the jail's root; name "
           "the real path inside the root";
  }
  if (step == Step::create_mount_target && err == ELOOP) {
    return ": the target is a symlink; mount on a real directory or file";
  }
  if (step == Step::create_mount_target && err == ENOTDIR) {
    return ": a component of the target path is not a directory";
  }
  if (step == Step::mount_overlay && err == ELOOP) {
    return ": the session directory overlaps the bound directory; keep sessions elsewhere with "
           "--session-dir";
  }
  if (step == Step::mount_overlay) {
    return ": the dry run's copy-on-write layer could not be made; the session directory must be "
           "on a filesystem with user xattrs (ext4, xfs, btrfs, tmpfs), and the bound directory "
           "readable by the caller";
  }
  return "";
}

}  // namespace

SetupFailure describe_setup_failure(const child::Report& report, const FailureContext& context) {
  const auto step = static_cast<Step>(report.step);
  const int err = report.err;
  SetupFailure failure{std::string(step_name(step)), err, {}};
  const bool has_op =
      report.detail >= 0 && static_cast<std::size_t>(report.detail) < context.ops.size();

  switch (step) {
    case Step::open_bind_source:
    case Step::restrict_bind_source:
    case Step::mount_overlay:
    case Step::create_mount_target:
    case Step::mount:
    case Step::write_file:
    case Step::make_read_only:
      if (has_op) {
        const OpDescription& op = context.ops[static_cast<std::size_t>(report.detail)];
        const bool is_bind = step == Step::open_bind_source || step == Step::restrict_bind_source ||
                             step == Step::mount_overlay;
        failure.message =
            is_bind || (!op.source.empty() && op.source.front() == '/')
                ? fmt::format("cannot mount {} at {}: {}{}{}", op.source, op.target,
                              errno_text(err), mount_hint(step, err, op, context), origin_of(op))
                : fmt::format("cannot create {} in the jail's root: {}{}{}", op.target,
                              errno_text(err), mount_hint(step, err, op, context), origin_of(op));
        return failure;
      }
      break;
    case Step::layer_store:
      failure.message = fmt::format(
          "cannot make the tmpfs that holds the dry run's layers (--dry-run-size): {}; "
          "--dry-run-size unlimited writes them to the session directory instead",
          errno_text(err));
      return failure;
    case Step::stage_root:
      failure.message =
          context.rootfs.empty()
              ? fmt::format("cannot create the jail's root filesystem: {}", errno_text(err))
              : fmt::format("cannot use --rootfs {}: {}", context.rootfs, errno_text(err));
      return failure;
    case Step::cwd:
      failure.message = fmt::format(
          "cannot enter the working directory {} inside the jail as uid {}: {}: {}", context.cwd,
          context.identity.uid, errno_text(err),
          err == ENOENT ? "it is not mounted in the jail; bind it, or choose --cwd or --no-cwd"
          : err == ENOTDIR
              ? "it is not a directory; choose --cwd DIR or --no-cwd"
              : "it is not accessible to the jail's identity; choose --cwd or --no-cwd");
      return failure;
    case Step::pivot_root:
    case Step::detach_old_root:
    case Step::mount_private:
      failure.message =
          err == EPERM && userns_restricted_here()
              ? fmt::format(
                    "cannot switch to the jail's root ({}): {}: this host gives an "
                    "unprivileged user namespace no capability (Ubuntu's AppArmor "
                    "restriction): load jail's profile (sudo apparmor_parser -r "
                    "/etc/apparmor.d/jail) for the full jail, or use --isolation landlock",
                    failure.step, errno_text(err))
              : fmt::format(
                    "cannot switch to the jail's root ({}): {}: the host's mount setup does not "
                    "allow it; run `jail doctor`",
                    failure.step, errno_text(err));
      return failure;
    case Step::setsid:
    case Step::securebits:
    case Step::drop_bounding_set:
    case Step::setgroups:
    case Step::setgid:
    case Step::setuid:
    case Step::drop_capabilities:
    case Step::no_new_privs:
    case Step::verify_identity:
    case Step::not_dumpable:
      failure.message = fmt::format(
          "cannot drop the tool's privileges ({}): {}: refusing to run it with privileges it "
          "should not have",
          failure.step, errno_text(err));
      return failure;
    case Step::rlimits: {
      // The tool's user namespace cannot raise a hard limit, whoever the caller is: only the
      // limit jail itself was started under counts.
      std::string why;
      rlimit own{};
      if (err == EPERM && ::getrlimit(static_cast<__rlimit_resource>(report.detail), &own) == 0) {
        why = fmt::format(
            ": it is above the hard limit jail itself runs under ({}), which the jail cannot "
            "raise; raise it before starting jail (ulimit -H, prlimit) or ask for less",
            own.rlim_max == RLIM_INFINITY ? std::string("unlimited")
                                          : std::to_string(own.rlim_max));
      }
      failure.message =
          fmt::format("cannot set the tool's {} limit ({}): {}{}", rlimit_name(report.detail),
                      rlimit_constant_name(report.detail), errno_text(err), why);
      return failure;
    }
    case Step::cgroup_attach:
      failure.message = fmt::format(
          "cannot join the jail's cgroup: {}: refusing to run the tool outside its limits",
          errno_text(err));
      return failure;
    case Step::keeper_session:
    case Step::keeper_subreaper:
    case Step::start_runsc:
      failure.message = fmt::format(
          "cannot start runsc: the process that keeps it could not {}: {}",
          step == Step::keeper_session     ? "leave the caller's session (setsid)"
          : step == Step::keeper_subreaper ? "become a child subreaper (PR_SET_CHILD_SUBREAPER)"
                                           : "start it (clone3)",
          errno_text(err));
      if (step == Step::start_runsc && err == EAGAIN) {
        failure.message +=
            ": the caller is at its limit of processes (RLIMIT_NPROC or its cgroup's pids.max)";
      }
      return failure;
    case Step::runsc_session:
    case Step::runsc_mount_namespace:
    case Step::runsc_fds:
      failure.message =
          fmt::format("cannot start runsc: its process could not {}: {}",
                      step == Step::runsc_session ? "start a session of its own (setsid)"
                      : step == Step::runsc_mount_namespace
                          ? "make a private mount namespace of its own to bind the jail's root in"
                          : "take its stdio and debug log",
                      errno_text(err));
      return failure;
    case Step::exec_runsc:
      failure.message =
          fmt::format("cannot run {}: {}: reinstall the Debian package runsc",
                      context.runsc.empty() ? "runsc" : context.runsc, errno_text(err));
      return failure;
    case Step::seccomp:
      failure.message =
          fmt::format("cannot install the seccomp filter: {}: refusing to run the tool unfiltered",
                      errno_text(err));
      return failure;
    default:
      break;
  }
  failure.message = fmt::format("jail setup step {} failed: {}", failure.step, errno_text(err));
  return failure;
}

SetupFailure describe_exec_failure(int err, const FailureContext& context, int detail) {
  SetupFailure failure{"exec", err, {}};
  if (err == ENOENT && detail == child::kExecCommandExists) {
    failure.message = fmt::format(
        "cannot execute {} inside the jail: it is there{}, but the interpreter its #! line names "
        "(or, for a binary, its ELF loader) is not; bind what it needs, or run the interpreter "
        "yourself",
        context.command,
        context.command.find('/') != std::string::npos
            ? std::string()
            : fmt::format(" (on the jail's PATH, {})", context.path));
  } else if (err == ENOENT && context.command.find('/') == std::string::npos &&
             context.path.empty()) {
    // "is not on the jail's PATH ()" read as a fault of jail's.
    failure.message = fmt::format(
        "command not found: '{}': the jail's PATH is empty; give the command's path, or set "
        "PATH (--env PATH=/usr/bin:/bin)",
        context.command);
  } else if (err == ENOENT) {
    failure.message =
        context.command.find('/') != std::string::npos
            ? fmt::format("command not found: {} does not exist inside the jail", context.command)
            : fmt::format(
                  "command not found: '{}' is not on the jail's PATH ({}); "
                  "bind the directory that holds it, or give its path",
                  context.command, context.path);
  } else {
    failure.message = fmt::format(
        "cannot execute {} inside the jail: {}{}", context.command, errno_text(err),
        err == EACCES    ? ": it is a directory, or not executable by the jail's "
                           "identity, or its filesystem is mounted noexec"
        : err == ENOEXEC ? ": it is not a program the kernel can load (a script needs a #! line "
                           "naming its interpreter, or run the interpreter: sh FILE)"
                         : "");
  }
  return failure;
}

}  // namespace jail
