// Parent side: jail's policy loader for gVisor runs (the program is jail/in_sandbox/
// load_policy.cpp, compiled into libjail as bytes). A bundle whose command is known to run
// (oci/command_runs.hpp) starts the loader instead of the tool: it loads the policy — compiled
// as for a native run, with direct actions — as a seccomp filter inside the sandbox and execs
// the tool. Against the same policy handed to runsc as an OCI profile (--oci-seccomp):
// - the sentry has no profile to convert and dump into its debug log at every start (~25 ms of
//   a ~200 ms start here; bench/results.md);
// - an errno rule returns its own errno (runsc's OCI reader returns EPERM for all but a few),
//   and a kill rule is the sentry's KILL_PROCESS (the OCI form is a catchable SIGSYS).
// The program goes in the loader's environment, which the loader takes out before the exec.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "policy/compile.hpp"

namespace jail {

extern const unsigned char kPolicyLoaderProgram[];
extern const std::size_t kPolicyLoaderProgramSize;

// Where the loader lies in the bundle's rootfs, as the jail sees it: the tool sees the directory.
inline constexpr std::string_view kPolicyLoaderDirectory = "/.jail";
inline constexpr std::string_view kPolicyLoaderPath = "/.jail/load-policy";
inline constexpr std::string_view kPolicyProgramVariable = "JAIL_SECCOMP_PROGRAM";

// Whether gVisor applies every action `program` returns as Linux does. This runsc (Debian's
// 0.0~20221219) answers SECCOMP_RET_LOG by killing the thread (and refuses SCMP_ACT_LOG in an
// OCI profile), so a policy with a `log` rule is refused under runsc.
[[nodiscard]] bool loadable_in_gvisor(const policy::Program& program);

// The loader's environment entry carrying `program`: NAME=hex of its instructions.
[[nodiscard]] std::string policy_program_entry(const policy::Program& program);

// Writes the loader at kPolicyLoaderPath under `rootfs` (mode 0555). Throws jail::Error.
void write_policy_loader(const std::filesystem::path& rootfs);

}  // namespace jail
