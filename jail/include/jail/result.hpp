// jail::Result — what happened to a run, as separate fields: never one overloaded integer.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jail/limits.hpp"

namespace jail {

enum class Outcome { exited, signaled, timeout, oom, violation, setup_error, internal_error };

[[nodiscard]] std::string_view to_string(Outcome);

// A syscall the policy refused. Under Runtime::runsc gVisor logs neither the arguments (args are
// zeros) nor which of several rules applied (action may read "errno EPERM or kill"), and pid is
// the sandbox's.
struct Violation {
  std::string syscall;
  int number = -1;
  std::array<std::uint64_t, 6> args{};
  pid_t pid = 0;
  std::string action;  // "kill", "errno EPERM", ...
  // The policy rule that decided, "default.policy:87" (the line of its `default` when no rule
  // matched); empty where it is not known (runsc's log names no rule).
  std::string rule;
  // What the call named where the supervisor checked it: a refused connect's socket ("@NAME" for
  // an abstract one); empty for the rest.
  std::string target;
};

// A syscall the tool made, as seen in SeccompMode::learn.
struct SyscallUse {
  std::string name;
  int number = -1;
  std::uint64_t count = 0;
  std::vector<std::array<std::uint64_t, 6>> distinct_args;  // the first few distinct argument sets
  // The distinct values of the argument a learned rule conditions on (ioctl's request, …; none
  // for other syscalls), as the filter compares them, the first 256; `more_condition_values`
  // when others came.
  std::vector<std::uint64_t> condition_values;
  bool more_condition_values = false;
};

// A path the tool looked up in its root, as seen with LookupTrace::record: absolute, as the jail
// sees it (a relative path is joined to the tool's working directory or the directory fd it
// named).
// Whether a lookup went on to what a symlink at the end of the path points to (stat, open) or
// stopped at the link itself (lstat, readlink; newfstatat or statx with AT_SYMLINK_NOFOLLOW, open
// with O_NOFOLLOW): a lookup that stops there needs only the link, not its target.
enum class FinalLink { followed, not_followed };

// A path is listed once for each way it was looked up: followed, not followed, and run (execve,
// execveat).
struct FileLookup {
  std::string path;
  std::string syscall;  // the first call that looked it up: "openat", "execve", "newfstatat", …
  FinalLink final_link = FinalLink::followed;
};

struct Lookups {
  std::vector<FileLookup> paths;  // distinct lookups, in the order first seen
  // Lookups not in `paths`: past the limit on distinct paths, or whose path could not be read
  // from the tool's memory (the tool had already moved on or was gone).
  std::uint64_t beyond_limit = 0;
  std::uint64_t unreadable = 0;
  // Lookups below what the jail mounts over the root (/proc, /dev, /tmp, Spec::mounts): counted,
  // not listed, so that a tool walking a bound tree does not use up the limit.
  std::uint64_t under_jail_mounts = 0;
};

struct Denials {
  std::uint64_t count = 0;
  std::vector<Violation> first;  // the first few, in order
};

// Why jail itself could not start (or finish) the run: the step, the errno, and a sentence that
// says what failed, on what, and what to do.
struct SetupFailure {
  std::string step;
  int errno_value = 0;
  std::string message;
};

// One phase of a run's start and end (Spec::trace_timing): where the time goes.
struct PhaseTime {
  std::string phase;  // "cloned", "mounts done", "exec", ...
  double ms = 0;      // since launch() was entered (CLOCK_MONOTONIC, parent and child alike)
};

// The session a dry run left behind: its changes are applied only by dry_run::commit.
struct DryRunSession {
  std::string id;
  std::string dir;
  std::size_t changes = 0;
  // DryRun::size_bytes as the run had it (unset: no cap), and whether the layers filled it: the
  // tool's last writes there failed with ENOSPC.
  std::optional<std::uint64_t> size_limit_bytes;
  bool size_limit_hit = false;
};

// One connection the tool asked jail's egress proxy for (Spec::net_allow): what it named, and
// what became of it. A refusal's `reason` is a stable word ("not_in_allow_list",
// "address_refused", "resolve_failed", "connect_failed", "tls_sni_mismatch", "bad_request",
// "too_many_connections"); `detail` says it in a sentence.
struct NetConnection {
  std::string name;
  std::uint16_t port = 0;
  std::string method;   // "CONNECT", or the HTTP method of a plain request
  std::string address;  // the address connected to (allowed), or refused
  bool allowed = false;
  std::string reason;
  std::string detail;
  std::string sni;              // the TLS server name the tool sent, where it mattered
  std::uint64_t bytes_out = 0;  // tool to server
  std::uint64_t bytes_in = 0;   // server to tool
  // Still open when the jail ended (a server that never answered or closed): the counts are
  // what had moved by then.
  bool open_at_end = false;
};

struct Result {
  Outcome outcome = Outcome::internal_error;
  int exit_code = 0;  // the tool's own exit code when outcome == exited
  int signal = 0;     // the signal that ended the tool when outcome == signaled
  std::optional<Violation> violation;
  Denials denials;
  double wall_ms = 0;
  double cpu_user_ms = 0;
  double cpu_sys_ms = 0;
  std::uint64_t peak_memory_bytes = 0;
  std::optional<Limit> limit_hit;  // the limit that ended or shaped the run
  // "namespaces" or "landlock": the mode the tool ran in (Spec::isolation), so that nobody takes
  // one for the other. Empty when the run never started.
  std::string isolation;
  bool output_truncated = false;  // the tool's output was cut at max_output_bytes
  // run() under Stdio::pipe: the tool's stdout and stderr, each up to RunOutput::keep_bytes; the
  // flags say a stream went on past that (the rest was read and dropped, never blocked).
  std::string stdout_bytes;
  std::string stderr_bytes;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  std::vector<SyscallUse> syscalls_seen;  // SeccompMode::learn only, by syscall number
  std::optional<Lookups> lookups;         // LookupTrace::record only
  Limits limits;                          // the limits the run had, echoed back
  // How each of them was held (limit → "cgroup v1, the whole jail", "RLIMIT_CPU, each process
  // of the tool", "supervisor: …"), in the order of Limits' fields.
  std::vector<std::pair<std::string, std::string>> limits_enforced;
  std::optional<DryRunSession> dry_run;
  std::optional<SetupFailure> error;
  std::vector<PhaseTime> timings;   // Spec::trace_timing only: every phase reached, in order
  std::vector<std::string> masked;  // host paths of credential stores hidden in the binds
  // The tool reached only abstract Unix sockets made inside the jail (Landlock ABI 6+); false on
  // an older kernel, where with Net::host the host's were reachable.
  bool abstract_sockets_scoped = false;
  // The per-user kernel quotas of the jail's own user namespace (/proc/sys/user/NAME → value):
  // a quarter of the host's, so that the caller keeps the rest. Native runs only.
  std::vector<std::pair<std::string, std::uint64_t>> quotas;
  // Spec::net_allow only: every connection the tool asked the egress proxy for, in order.
  std::vector<NetConnection> connections;
};

// The CLI's exit code contract: the tool's own; 128+n for signal n; 124 timeout; 137 OOM;
// 159 seccomp kill; 125 jail could not set up; 126 not executable; 127 not found.
[[nodiscard]] int exit_code_for(const Result&);

// The layout of to_json's object, in its "schema" field (docs/usage.md, "The status JSON"). A
// change to a field's name, type or meaning raises it; a new field does not.
inline constexpr int kStatusSchema = 1;

// One JSON object, as written by --status-fd / --status-file.
[[nodiscard]] std::string to_json(const Result&);

}  // namespace jail
