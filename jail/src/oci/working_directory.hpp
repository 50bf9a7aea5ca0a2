// Parent side: whether a bundle's working directory exists in the jail it lays out. OCI runtimes
// create a missing one before they start the tool (runsc's gofer, runc) — as root, on the host,
// through whichever bind holds it, read-only or not — where a native run refuses to start. So
// the bundle is checked first, resolving the path as the jail would (against this host's files:
// an exported bundle names them).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "child/plan.hpp"
#include "plan_builder.hpp"

namespace jail::oci {

// Throws jail::Error ("chdir", ENOENT) unless `cwd` (absolute, normalized) is a directory in the
// jail laid out by `plan` over the root directory `root`: each component in turn, in the last
// mount that holds it, symlinks followed as
// the jail follows them — an absolute one from the jail's root, never the host's.
void check_working_directory(const child::Plan& plan,
                             const std::vector<OpDescription>& descriptions,
                             const std::filesystem::path& root, const std::string& cwd);

// Whether `path` (absolute; "." and ".." taken as the jail takes them) names a file of any kind in
// the same jail, looked up as check_working_directory looks up a directory. A symlink at the end is
// followed, as an exec follows it: a dangling one does not exist.
[[nodiscard]] bool exists_in_jail(const child::Plan& plan,
                                  const std::vector<OpDescription>& descriptions,
                                  const std::filesystem::path& root, const std::string& path);

// Throws jail::Error ("mount", ELOOP) naming the first mount of `plan` (but those `left_out`
// marks, when given, and the runtime's own under /dev) whose target passes through a symlink in
// a bound host directory, in the jail the mounts before it lay out. An OCI runtime resolves a
// mount's target following its symlinks within the root (runsc's gofer, runc's securejoin), so
// a link in a bound directory — the caller's, or one the tool left there — would lead the mount
// onto another path of the jail, /etc say; the native run refuses it (targets resolved beneath
// the root, the last component never followed).
void check_mount_targets(const child::Plan& plan, const std::vector<OpDescription>& descriptions,
                         const std::filesystem::path& root, const bool* left_out = nullptr);

// The host file that serves `path` in the same jail, found as exists_in_jail finds it (a
// symlink at the end followed), or nullopt when there is none (missing, under /proc, or in one
// of the jail's own tmpfs).
struct HostFile {
  std::filesystem::path path;
  bool allow_exec = true;  // the mount that holds it is not noexec
};
[[nodiscard]] std::optional<HostFile> host_file_in_jail(
    const child::Plan& plan, const std::vector<OpDescription>& descriptions,
    const std::filesystem::path& root, const std::string& path);

}  // namespace jail::oci
