// Parent side: the supervisor. One poll loop over the jail init's pidfd, the report socket, the
// tool's seccomp listener (or runsc's debug log), the pty relay, the output relay, the wall-clock
// deadline and (for the CLI) a signalfd of the signals to forward. It runs on the Process's own
// thread (process.cpp) from launch until the jail has ended.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "cpu_budget.hpp"
#include "egress_proxy.hpp"
#include "input_relay.hpp"
#include "jail/result.hpp"
#include "outcome.hpp"
#include "output_relay.hpp"
#include "process_state.hpp"
#include "runsc/denial_log.hpp"
#include "seccomp/denials.hpp"
#include "terminal_relay.hpp"

namespace jail {

// A signal for the tool: natively to the jail's init, which forwards it; under runsc to the
// container's init by `runsc kill` (signalled, `runsc run` itself would die of SIGTERM or drop
// SIGUSR1). SIGKILL, and a signal runsc cannot deliver yet (the container not started), go to
// `runsc run` (through its keeper, runsc/keeper.hpp), and are then noted in
// `state.signal_sent`: its death is the one asked for.
void signal_tool(Process::State& state, int signal);

// SIGKILL for the jail (as signal_tool) and waits for jail's child: where a launch or a
// supervisor failed. Under runsc the keeper has then reaped runsc and what it left.
void end_and_reap(Process::State& state);

// Notes `signal` in `state.signal_sent`, to which the jail's end is put down: the last one sent,
// except that a SIGKILL, once sent, is what ended it whatever was sent after.
void note_signal(Process::State& state, int signal);

class Supervisor {
 public:
  using Clock = std::chrono::steady_clock;

  explicit Supervisor(Process::State& state);

  // Supervises until the jail has ended (true) or `until` has passed (false).
  [[nodiscard]] bool run(std::optional<Clock::time_point> until);
  // Once run() returned true: reap, read the cgroup, remove it, decide. Call once.
  [[nodiscard]] Result finish();

 private:
  void on_reports();
  void on_signals();
  void on_runsc_log();
  // Whether runsc's log is polled this round (not while it rests after a read).
  [[nodiscard]] bool runsc_log_due();
  // Whether the seccomp listener is polled this round (not while its CPU budget rests).
  [[nodiscard]] bool listener_due() const;
  void on_deadline();
  [[nodiscard]] int poll_timeout(std::optional<Clock::time_point> until) const;

  Process::State& state_;
  UniqueFd signals_;
  std::unique_ptr<DenialHandler> denials_;
  // The listener's share of a CPU: 10 % (docs/usage.md); half a CPU while learning or tracing
  // lookups, where every call of the tool is routed here on purpose.
  static constexpr std::chrono::milliseconds kDenialWindow{100};
  CpuBudget denial_budget_;
  std::unique_ptr<RunscDenialLog> runsc_denials_;
  std::unique_ptr<TerminalRelay> terminal_;
  std::unique_ptr<OutputRelay> output_;
  std::unique_ptr<InputRelay> input_;
  std::unique_ptr<EgressProxy> egress_;  // Spec::net_allow
  // Wall-clock limit: SIGTERM at the deadline, SIGKILL after the grace.
  std::optional<Clock::time_point> next_deadline_;
  bool timed_out_ = false;
  bool ended_for_violation_ = false;  // runsc: the sandbox was killed for a denied call
  static constexpr std::chrono::milliseconds kLogRest{10};
  std::optional<Clock::time_point> log_rest_until_;  // runsc's log is not polled before then
  // The jail's writable tmpfs mounts (mount op index, a descriptor of the mount): read at the
  // end, to name one that filled up.
  std::vector<std::pair<int, UniqueFd>> tmpfs_;
  // The mount ids of the jail's writable tmpfs mounts and layers: a socket made there is the
  // jail's own (seccomp/connect_broker.hpp).
  std::vector<std::uint64_t> own_mounts_;
  // Logs each of them that ended full; true if one did.
  // Hands a capped dry run's store of layers (ReportKind::layer_store) to its recorder.
  void take_layer_store();
  // Moves the tmpfs mounts the child sent (ReportKind::tmpfs) into tmpfs_.
  void take_tmpfs_reports();
  [[nodiscard]] bool any_tmpfs_full();
  bool ended_ = false;
  Clock::time_point ended_at_;  // when the init's end was seen: the run's wall time ends there
};

}  // namespace jail
