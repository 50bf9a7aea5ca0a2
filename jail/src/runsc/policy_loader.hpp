// Parent side: jail's policy loader for gVisor runs (the program is jail/in_sandbox/
// load_policy.cpp, compiled into libjail as bytes). A bundle whose command is known to run
// (oci/command_runs.hpp) starts the loader instead of the tool: it loads the policy — compiled
// as for a native run, with direct actions — as a seccomp filter inside the sandbox and execs
// the tool. Against the same policy handed to runsc as an OCI profile (--oci-seccomp):
// - the sentry has no profile to convert and dump into its debug log at every start (~15 ms of
//   a ~200 ms start here; bench/results.md);
// - an errno rule returns its own errno (runsc's OCI reader returns EPERM for all but a few),
//   and a kill rule is the sentry's KILL_PROCESS (the OCI form is a catchable SIGSYS).
// The loader and the program lie in the bundle's rootfs, read-only in the sandbox.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string_view>

#include "policy/compile.hpp"

namespace jail {

extern const unsigned char kPolicyLoaderProgram[];
extern const std::size_t kPolicyLoaderProgramSize;

// Where the loader and the program lie, as the jail sees them: the tool sees them too (the
// program is the policy, which is no secret from the tool it binds).
inline constexpr std::string_view kPolicyLoaderDirectory = "/.jail";
inline constexpr std::string_view kPolicyLoaderPath = "/.jail/load-policy";
inline constexpr std::string_view kPolicyProgramPath = "/.jail/policy.bpf";

// Whether gVisor applies every action `program` returns as Linux does. This runsc (Debian's
// 0.0~20221219) answers SECCOMP_RET_LOG by killing the thread (and refuses SCMP_ACT_LOG in an
// OCI profile), so a policy with a `log` rule is refused under runsc.
[[nodiscard]] bool loadable_in_gvisor(const policy::Program& program);

// Writes the loader (mode 0555) and `program` (0444) at their paths under `rootfs`, whatever
// the umask. Throws jail::Error; refuses a directory that is already there.
void write_policy_loader(const std::filesystem::path& rootfs, const policy::Program& program);

}  // namespace jail
