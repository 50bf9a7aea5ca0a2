// jail::Spec — everything a run needs, as plain data. The CLI fills it from flags; a plugin host
// fills it in code. It is validated once, by launch(), before anything is cloned.
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

// Which network the tool sees. `none` is a fresh network namespace holding only `lo`.
enum class Net { none, host };

// How the tool is kept apart. namespaces: its own user, mount, pid, network, IPC and UTS
// namespaces (the full jail). landlock: for hosts where a user namespace cannot be made (a
// container's seccomp profile, user.max_user_namespaces = 0): no namespaces, the host's
// filesystem confined by Landlock, the same seccomp policy (docs/landlock.md says what it cannot
// keep). automatic: namespaces where the kernel lets this caller make them, else landlock.
enum class Isolation { automatic, namespaces, landlock };

enum class MountKind { bind, ro_bind, tmpfs };

// How the tool's stdin/stdout/stderr are connected.
//  inherit: the caller's descriptors are handed to the tool as they are (pipes and files at full
//           speed). Never use it with a terminal: the tool could inject input into it.
//  pty:     the descriptors that are terminals are replaced by a pty of the jail's own, relayed
//           to the caller's terminal by the supervisor; the others are handed over as they are.
//  pipe:    three pipes; Process::stdin_fd/stdout_fd/stderr_fd are the caller's ends (a plugin
//           host talks to the tool through them).
enum class Stdio { inherit, pty, pipe };

// Who runs the tool: jail itself (namespaces, seccomp, cgroups) or gVisor's runsc, whose
// user-space kernel stands between the tool and the host's. Under runsc, jail's child is a keeper
// that starts `runsc run` and reaps the sandbox and gofer processes runsc leaves behind: a host
// that is a child subreaper (PR_SET_CHILD_SUBREAPER, or PID 1) inherits none of them, unless one
// outlives runsc by more than 5 s. Like a native jail's init, the keeper starts as a copy-on-write
// copy of the host process and lets go of the host's heap once it has started runsc (launch.hpp).
enum class Runtime { native, runsc };

// enforce: the policy decides. learn: every syscall is allowed and reported to the supervisor,
// and the Result lists what the tool used (`jail policy learn` writes a policy from it).
enum class SeccompMode { enforce, learn };

// record: every path the tool looks up (open, stat, access, readlink, exec, …) passes the
// supervisor, which notes it and lets the call run unchanged; the Result lists the paths in the
// root (those below /proc, /dev, /tmp and `mounts` are only counted)
// (`jail rootfs check` reports those a prepared root lacks). Each lookup then costs a round trip
// to the supervisor, so leave it off for ordinary runs. Native runtime with a seccomp policy only.
enum class LookupTrace { off, record };

// What the tool reads: the caller's stdin (per Stdio), or nothing (/dev/null).
enum class Input { inherit, none };

// One mount the caller asked for, on top of the root. `origin` says where it came from
// ("--bind on the command line", "profile web.toml") so an error can point back at it.
struct Mount {
  MountKind kind = MountKind::ro_bind;
  std::string source;                       // host path (bind, ro_bind); empty for tmpfs
  std::string target;                       // absolute path inside the jail
  std::optional<std::uint64_t> size_bytes;  // tmpfs only
  std::string origin;
  // A symbolic link anywhere in `source` is followed (--bind-follow). By default it is refused:
  // a tool that could write where the source is may have planted it for the next run.
  bool follow_symlinks = false;

  // Read as they are written: Mount::ro_bind("/srv/plugin", "/plugin", "the plugin directory").
  [[nodiscard]] static Mount bind(std::string source, std::string target, std::string origin = {}) {
    return {MountKind::bind, std::move(source), std::move(target), std::nullopt, std::move(origin)};
  }
  [[nodiscard]] static Mount ro_bind(std::string source, std::string target,
                                     std::string origin = {}) {
    return {MountKind::ro_bind, std::move(source), std::move(target), std::nullopt,
            std::move(origin)};
  }
  // No size: the Spec's tmp_size_bytes, as for /tmp.
  [[nodiscard]] static Mount tmpfs(std::string target,
                                   std::optional<std::uint64_t> size_bytes = std::nullopt,
                                   std::string origin = {}) {
    return {MountKind::tmpfs, {}, std::move(target), size_bytes, std::move(origin)};
  }
};

inline constexpr std::uint64_t kDefaultDryRunSizeBytes = 1ull << 30;

// A dry run: every writable bind is an overlay whose upper layer is a session directory, so the
// tool sees its own writes and the host sees none until `jail commit` (see jail/dry_run.hpp).
struct DryRun {
  std::string sessions_dir;          // empty: dry_run::default_sessions_dir()
  std::vector<std::string> command;  // recorded in the manifest; empty: Spec::argv
  // The cap on what the tool may write into its layers, all of them together. While the tool
  // runs they live on a tmpfs of this size (memory, counted in the jail's memory use), copied
  // to the session when it ends. Unset: the layers are written to the session directly, with
  // no cap but the disk's.
  std::optional<std::uint64_t> size_bytes = kDefaultDryRunSizeBytes;
};

inline constexpr std::uint64_t kDefaultTmpSizeBytes = 256ull << 20;

// Spec::policy for a run without a seccomp filter.
inline constexpr std::string_view kNoPolicy = "none";

// Names under a bound directory that hold credentials: masked in every bind of the caller's
// unless Spec::unmask names them.
inline constexpr std::array<std::string_view, 12> kMaskedSecrets = {".ssh",
                                                                    ".gnupg",
                                                                    ".aws",
                                                                    ".azure",
                                                                    ".config/gcloud",
                                                                    ".kube",
                                                                    ".docker/config.json",
                                                                    ".netrc",
                                                                    ".git-credentials",
                                                                    ".pgpass",
                                                                    ".npmrc",
                                                                    ".pypirc"};

struct Spec {
  // argv[0] is looked up on the PATH of `env` *inside* the jail unless it contains a '/'.
  std::vector<std::string> argv;
  // The tool's whole environment, "KEY=VALUE" each. Nothing of the caller's leaks in unless put
  // here.
  std::vector<std::string> env;

  // Identity inside the jail. Unset: a root caller's tool runs as 1000:1000, any other caller's as
  // its own uid/gid.
  std::optional<uid_t> uid;
  std::optional<gid_t> gid;

  std::string hostname = "jail";
  Net net = Net::none;
  Isolation isolation = Isolation::automatic;
  // The tool connects only to Unix sockets made inside the jail: socket files on its own
  // filesystems (/tmp, /dev/shm, a tmpfs, a dry run's layer) and, in its own network
  // namespace, abstract names. These reach the host's on purpose: socket files, as paths in the
  // jail (a bind shows them there), and abstract names (without the leading NUL), which only
  // Net::host can reach at all.
  std::vector<std::string> allow_sockets;
  std::vector<std::string> allow_abstract;
  // Egress by allow-list (docs/egress.md): with entries ("NAME[:PORT]", "*.NAME", an IP address
  // or CIDR range; no port: 443 and 80), the tool's own network (Net::none) gets one way out, an
  // HTTP proxy at 127.0.0.1:3128 inside it (HTTP_PROXY and the like are set), served from the
  // host side by the helper jail-egress, which reaches only what the list names. Names resolving
  // to loopback, link-local or metadata addresses are refused, and to private ranges unless
  // net_allow_private. Every attempt is in Result::connections. Native namespaces mode only.
  std::vector<std::string> net_allow;
  bool net_allow_private = false;
  // The jail-egress executable; empty: the installed one (LIBEXECDIR/jail/jail-egress).
  std::string egress_helper;

  // A prepared root directory to use read-only instead of the host-minimal root.
  std::optional<std::string> rootfs;
  // Working directory inside the jail; must exist there (bind it with a Mount).
  std::string cwd = "/";
  std::vector<Mount> mounts;
  // Credential stores at the top of a directory bind (kMaskedSecrets: .ssh, .aws, .netrc, …)
  // are hidden under an empty read-only entry; these host paths are shown anyway (--unmask).
  std::vector<std::string> unmask;
  std::uint64_t tmp_size_bytes = kDefaultTmpSizeBytes;
  std::optional<DryRun> dry_run;

  Runtime runtime = Runtime::native;
  std::string runsc_platform;  // runsc --platform; empty: ptrace
  Stdio stdio = Stdio::inherit;
  Input input = Input::inherit;
  // With Stdio::inherit: stdout and stderr go through the supervisor, which stops relaying after
  // this many bytes (together); the tool then gets EPIPE/SIGPIPE and the Result says so.
  std::optional<std::uint64_t> max_output_bytes;

  // The seccomp policy: a shipped name ("default", "python", "minimal"), a path to a .policy
  // file, or kNoPolicy (no filter at all — for debugging only).
  std::string policy = "default";
  SeccompMode seccomp_mode = SeccompMode::enforce;
  LookupTrace lookups = LookupTrace::off;

  Limits limits;
  // Where the jail's cgroup is created, as a cgroup path like those in /proc/self/cgroup; unset:
  // under the caller's own cgroup.
  std::optional<std::string> cgroup_parent;

  // Forward SIGINT/SIGTERM/SIGHUP/SIGQUIT/SIGUSR1/SIGUSR2 received by this process to the tool
  // while waiting. The caller must have blocked them (the CLI does); a library host usually
  // leaves this off and calls Process::kill itself.
  bool forward_signals = false;

  // Record when each phase of start-up and tear-down happened (Result::timings). Off by default:
  // it costs one record on the report socket per phase. Native runtime only.
  bool trace_timing = false;
};

// The environment a tool gets when the caller says nothing: enough for ordinary programs, nothing
// that identifies the caller. `term` (the caller's TERM) is passed on only when given, which the
// CLI does when its output is a terminal.
[[nodiscard]] std::vector<std::string> default_environment(const std::string& term = {});

// The value of the variable `name` in `env` ("NAME=value" entries): the last one where it is
// given twice, as the jail takes it (a native run's PATH search, gVisor's environment); nullopt
// when it is not there.
[[nodiscard]] std::optional<std::string> environment_value(const std::vector<std::string>& env,
                                                           std::string_view name);

}  // namespace jail
