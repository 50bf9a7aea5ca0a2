// Seccomp profile interchange with OCI runtimes (runc, crun, runsc) and Docker/Podman: the
// `linux.seccomp` object of a config.json, or a Docker-style profile with archMap and
// includes/excludes, read into a policy and written back out.
//
// The two languages mean different things by several rules, and both directions honour
// libseccomp's reading of a profile: the comparisons of one entry are ANDed; entries of one
// syscall are alternatives with no order; the first entry without conditions decides the
// whole syscall (libseccomp drops later entries and earlier conditional ones); an entry whose
// action is the default has no effect (libseccomp refuses it, runc skips it); one comparison
// per argument per entry. A profile whose meaning depends on an order libseccomp does not
// define, or a policy that cannot be written in those terms, is refused with the reason.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.hpp"

namespace jail::policy {

// What includes/excludes are resolved against.
struct ImportTarget {
  // "6.18.0-…" as uname(2) reports it; empty means this host's.
  std::string kernel_release;
  // CAP_* names the tool holds. The jail's tool holds none, so entries that need one drop out.
  std::vector<std::string> capabilities;
  // `first` for a jail's own filter: entries the baseline decides are left out, as they would
  // never apply. `none` keeps them, for loading the profile as its runtime does (then parsed
  // with Baseline::none too).
  Baseline baseline = Baseline::first;
};

// The message says what is wrong and where ("docker.json:12:5: …", "syscalls[3].args[0].op: …").
class ImportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// JSON text → policy text: a header naming the source, `default …`, then rules in the
// profile's order with its comments kept as `#` lines. `source_name` is shown in the header and
// in error messages. Throws ImportError.
[[nodiscard]] std::string import_oci_seccomp(std::string_view json_text,
                                             std::string_view source_name,
                                             const ImportTarget& target = {});

class ExportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The policy's decisions — baseline included — as an OCI `linux.seccomp` object for x86_64.
// Throws ExportError naming the syscall and rule when libseccomp cannot express them exactly.
[[nodiscard]] nlohmann::json export_oci_seccomp(const Policy& policy);

// The same decisions as gVisor's runsc reads a profile under --oci-seccomp, which is not
// libseccomp's reading: runsc tries the entries in order and the first that matches decides,
// so each syscall's rules are written as the policy orders them, with no negated regions (the
// default policy's profile shrinks from 207 entries to a few dozen, and each runsc process
// parses it again at every start). runsc answers every SCMP_ACT_ERRNO with EPERM whatever the
// errnoRet (google/gvisor#14688), so an `errno ENOSYS` rule is written as SCMP_ACT_TRACE,
// which fails with ENOSYS when no tracer is attached — unless the policy lets ptrace run,
// when a tracer could let the call through: it is then EPERM. Other errnos also become
// EPERM (still refused, with another code; errnoRet is kept for a runsc that reads it).
// runsc refuses SCMP_ACT_KILL_PROCESS: `kill` is SCMP_ACT_TRAP, whose uncaught SIGSYS ends the
// process. Throws ExportError as export_oci_seccomp does.
[[nodiscard]] nlohmann::json export_runsc_seccomp(const Policy& policy);
// Whether some call to ptrace can run under the policy (a rule before the first unconditional
// one, or the default, lets it). A tracer could then let an SCMP_ACT_TRACE call through, so
// export_runsc_seccomp writes `errno ENOSYS` rules as EPERM; and gVisor checks a filter before a
// tracer's syscall-entry stop and not after it, so the tracer can change the call into one the
// policy refuses (Linux checks again since 4.8).
[[nodiscard]] bool ptrace_can_run(const Policy& policy);
// The reason, in the words every refusal and warning of such a policy gives (checked with runsc
// 0.0~20221219: a tracer turned an allowed getppid into the killed unshare, which ran).
inline constexpr std::string_view kGvisorTracerBypass =
    "a tracer can change a call after the filter has allowed it, into one the policy refuses "
    "(gVisor checks the filter before a tracer's syscall-entry stop and not after it, as Linux "
    "does)";

}  // namespace jail::policy
