// Parent side: what a running jail is, shared by launch (which makes it) and the supervisor
// (which waits on it).
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "cgroup/cgroup.hpp"
#include "dry_run/recorder.hpp"
#include "egress_proxy.hpp"
#include "id_slot.hpp"
#include "identity.hpp"
#include "jail/launch.hpp"
#include "plan_builder.hpp"
#include "policy/policy.hpp"
#include "report_channel.hpp"
#include "seccomp/connect_broker.hpp"
#include "temp_dir.hpp"
#include "timeline.hpp"
#include "unique_fd.hpp"

namespace jail {

class Supervisor;
class RunscSandbox;

// What a failure message needs to know about the run that failed.
struct FailureContext {
  std::vector<OpDescription> ops;
  std::string command;
  std::string path;  // PATH inside the jail
  std::string cwd;
  std::string rootfs;
  Identity identity;
  std::string runsc;  // the runsc binary, under --runtime runsc
};

struct Process::State {
  UniqueFd pidfd;
  pid_t pid = -1;
  // Kept open for the jail's whole life: the jail's init (under runsc, the keeper) sees EOF on it
  // when this process dies.
  UniqueFd go_write;
  ReportChannel reports;
  // For answering the tool's seccomp notifications; null with --policy none.
  std::shared_ptr<const policy::Policy> policy;
  bool learn = false;  // SeccompMode::learn: record every syscall
  LookupTrace lookups = LookupTrace::off;
  std::vector<std::string> jail_mounts;  // with lookups: /proc, /dev, /tmp and Spec::mounts
  // With a pty: the caller's fds the relay reads from (-1: none) and writes to.
  bool pty = false;
  int pty_input = -1;
  int pty_output = -1;
  // The tool's stdout is the pty (else a pipe or file of the caller's).
  bool pty_has_stdout = false;
  FailureContext context;
  // A root caller's jail: its host ids, held until the State goes (the jail has ended).
  IdSlot id_slot;
  std::vector<std::string> masked;       // credential stores hidden in the binds (Result::masked)
  bool abstract_sockets_scoped = false;  // Result::abstract_sockets_scoped
  std::string isolation;                 // Result::isolation
  // The Landlock mode: the init must end the tool's processes itself, so a SIGKILL for the jail
  // closes go_write (the init's lifeline) instead of killing the init; and the tool's private
  // temporary directory, removed with the state.
  bool landlock = false;
  bool signals_checked = false;  // below Landlock ABI 6 (seccomp/signal_check.hpp)
  TempDir private_tmp;
  // Under a filter, natively: what the connect broker lets the tool reach beyond the jail's own
  // sockets, and as whom (seccomp/connect_broker.hpp).
  std::optional<SocketAccess> sockets;
  std::vector<std::pair<std::string, std::uint64_t>> quotas;  // Result::quotas
  // Spec::net_allow: the egress proxy the supervisor starts on the init's listener.
  std::optional<EgressConfig> egress;
  // The current directory, bound read-only, whose writes the filter sends to the supervisor
  // (seccomp/write_watch.hpp).
  std::optional<std::string> read_only_cwd;
  bool forward_signals = false;
  Limits limits;
  // Owned for the jail's life: removed (after its usage is read) when the run ends, and by its
  // destructor on every other path.
  cgroup::Group cgroup;
  // With Stdio::pipe: the caller's ends of the tool's stdin, stdout, stderr.
  std::array<UniqueFd, 3> stdio_pipes;
  // Under runsc, when the caller's stdin may not be handed to runsc (see plumb_stdio): the
  // supervisor's end of the tool's stdin pipe, which it fills from the caller's stdin, and a
  // second read end of that pipe (InputRelay).
  UniqueFd input_sink;
  UniqueFd input_spare_reader;
  // With max_output_bytes: the supervisor's ends of the tool's stdout and stderr.
  std::array<UniqueFd, 2> output_sources;
  std::optional<std::uint64_t> max_output_bytes;
  // A dry run's session: its changes are recorded when the run ends.
  std::unique_ptr<dry_run::Recorder> dry_run;
  // With Runtime::runsc: the sandbox's bundle, state and id; the pidfd is `runsc run`'s.
  std::unique_ptr<RunscSandbox> runsc;
  // With runsc and a policy: the read end of runsc's debug log, where gVisor's denials are.
  UniqueFd runsc_debug_log;
  // The init has been reaped: its pid may be another process's now (the pidfd stays exact).
  std::atomic<bool> waited = false;
  // The last signal sent through kill() or by the supervisor; read when the result is decided.
  std::atomic<int> signal_sent = 0;
  // The supervisor runs on a thread of its own from launch to the init's end, so that deadlines,
  // seccomp notifications and relays are served whatever the caller does meanwhile (reads the
  // tool's stdout to its end before waiting, or waits late). What it ends with is handed to
  // wait() under `mutex`.
  std::thread supervisor_thread;
  std::mutex mutex;
  std::condition_variable supervisor_ended;
  bool ended = false;            // guarded by mutex: `result` or `error` is set
  std::optional<Result> result;  // kept: every wait() returns a copy of it
  std::exception_ptr error;
  // The first wait() to see `ended` joins the supervisor thread; the others wait for that.
  std::once_flag joined;
  // Signalled when the Process is dropped: the relays stop waiting for the caller to read the
  // tool's last output.
  UniqueFd stop_relays;
  std::chrono::steady_clock::time_point started;
  Timeline timeline;  // --trace-timing: the parent's and supervisor's marks

  State();
  ~State();
};

}  // namespace jail
