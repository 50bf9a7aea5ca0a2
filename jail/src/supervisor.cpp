#include "supervisor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "limit_enforcement.hpp"
#include "log.hpp"
#include "mountinfo.hpp"
#include "runsc/keeper.hpp"
#include "runsc/sandbox.hpp"
#include "spawn_support.hpp"

#include "jail/error.hpp"
#include "jail/signals.hpp"

namespace jail {
namespace {

UniqueFd forwarding_signalfd(bool pty) {
  sigset_t set;
  sigemptyset(&set);
  for (const int sig : kForwardedSignals) sigaddset(&set, sig);
  // The caller's window changes reach the tool through the pty, not as a forwarded signal.
  if (pty) sigaddset(&set, SIGWINCH);
  return UniqueFd(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
}

}  // namespace

void note_signal(Process::State& state, int signal) {
  int last = state.signal_sent.load();
  while (last != SIGKILL && !state.signal_sent.compare_exchange_weak(last, signal)) {
  }
}

void signal_tool(Process::State& state, int signal) {
  if (state.runsc) {
    if (signal != SIGKILL && state.runsc->signal_container(signal)) return;
    note_signal(state, signal);
    // The keeper passes the signal on to runsc run, and a stop request becomes runsc's SIGKILL;
    // a SIGKILL of the keeper itself would leave runsc's last processes to the caller.
    if (signal == SIGKILL) {
      stop_keeper(state.pidfd.get());
      return;
    }
  }
  if (state.landlock && signal == SIGKILL && state.go_write.valid()) {
    // Without a pid namespace a killed init would leave the tool's processes running: closing
    // its lifeline makes it end every one of them, then itself (child/init.cpp).
    state.go_write.reset();
    return;
  }
  ::syscall(SYS_pidfd_send_signal, state.pidfd.get(), signal, nullptr, 0);
}

void end_and_reap(Process::State& state) {
  signal_tool(state, SIGKILL);
  reap(state.pid);
  state.waited = true;
}

Supervisor::Supervisor(Process::State& state)
    : state_(state),
      denial_budget_(kDenialWindow, state.learn || state.lookups == LookupTrace::record
                                        ? std::chrono::microseconds(50'000)
                                        : std::chrono::microseconds(10'000)) {
  if (state_.forward_signals) signals_ = forwarding_signalfd(state_.pty);
  if (state_.limits.timeout) next_deadline_ = state_.started + *state_.limits.timeout;
  if (state_.output_sources[0].valid()) {
    output_ = std::make_unique<OutputRelay>(std::move(state_.output_sources[0]),
                                            std::move(state_.output_sources[1]), STDOUT_FILENO,
                                            STDERR_FILENO, *state_.max_output_bytes);
  }
  if (state_.input_sink.valid()) {
    input_ = std::make_unique<InputRelay>(STDIN_FILENO, std::move(state_.input_sink),
                                          std::move(state_.input_spare_reader));
  }
  if (state_.runsc_debug_log.valid()) {
    runsc_denials_ =
        std::make_unique<RunscDenialLog>(std::move(state_.runsc_debug_log), state_.policy);
  }
}

int Supervisor::poll_timeout(std::optional<Clock::time_point> until) const {
  std::optional<Clock::time_point> wake = until;
  if (next_deadline_ && (!wake || *next_deadline_ < *wake)) wake = next_deadline_;
  if (log_rest_until_ && (!wake || *log_rest_until_ < *wake)) wake = log_rest_until_;
  if (const auto rest = denial_budget_.rest_until(); rest && (!wake || *rest < *wake)) wake = rest;
  if (input_ && input_->wake() && (!wake || *input_->wake() < *wake)) wake = input_->wake();
  if (!wake) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*wake - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 60'000));
}

void Supervisor::on_deadline() {
  if (!next_deadline_ || Clock::now() < *next_deadline_) return;
  if (!timed_out_) {
    timed_out_ = true;
    jail::log().info("timeout after {} ms: SIGTERM to the tool, SIGKILL in {} ms",
                     state_.limits.timeout->count(), state_.limits.kill_grace.count());
    signal_tool(state_, SIGTERM);
    next_deadline_ = Clock::now() + state_.limits.kill_grace;
  } else {
    // Killing the init ends the pid namespace; the cgroup kill also reaches anything that is in
    // the jail's cgroup but was never in its namespace.
    jail::log().info("the tool outlived the kill grace: SIGKILL to the jail");
    signal_tool(state_, SIGKILL);
    state_.cgroup.kill_all();
    next_deadline_.reset();
  }
}

void Supervisor::on_reports() {
  state_.reports.drain();
  // Before the listener: the child sent its mounts before the tool started.
  take_tmpfs_reports();
  for (auto& [op, layer] : state_.reports.take_all(child::ReportKind::layer)) {
    if (const auto id = mount_id_of(layer.get())) own_mounts_.push_back(*id);
  }
  take_layer_store();
  if (UniqueFd listener = state_.reports.take(child::ReportKind::seccomp_listener);
      listener.valid()) {
    denials_ = std::make_unique<DenialHandler>(
        std::move(listener), state_.policy, state_.learn,
        state_.lookups == LookupTrace::record ? std::make_unique<LookupRecorder>(state_.jail_mounts)
                                              : nullptr);
    if (const auto nofile = rlimit_in_force(state_.limits, RLIMIT_NOFILE)) {
      denials_->watch_exits(nofile->soft);
    }
    if (state_.read_only_cwd) denials_->watch_writes(*state_.read_only_cwd);
    if (state_.sockets) denials_->broker_connects(*state_.sockets, own_mounts_, state_.pid);
    if (state_.signals_checked) denials_->check_signals(state_.pid);
  }
  if (UniqueFd listener = state_.reports.take(child::ReportKind::egress_listener);
      listener.valid() && state_.egress) {
    egress_ = std::make_unique<EgressProxy>(std::move(listener), *state_.egress);
  }
  if (UniqueFd master = state_.reports.take(child::ReportKind::terminal); master.valid()) {
    terminal_ =
        std::make_unique<TerminalRelay>(std::move(master), state_.pty_input, state_.pty_output,
                                        state_.max_output_bytes, state_.pty_has_stdout);
  }
}

bool Supervisor::listener_due() const {
  return denials_ && !denial_budget_.rest_until();
}

bool Supervisor::runsc_log_due() {
  if (!runsc_denials_ || !runsc_denials_->open()) return false;
  if (log_rest_until_ && Clock::now() < *log_rest_until_) return false;
  log_rest_until_.reset();
  return true;
}

void Supervisor::on_runsc_log() {
  runsc_denials_->on_readable();
  // The sentry writes its log a line at a time (~200 KiB for a bare start): read at once, that
  // woke jail hundreds of times per start. The pipe holds 1 MiB, so it is read at most every
  // kLogRest instead; a killed call is acted on that much later at most, and gVisor has
  // already refused the call itself.
  log_rest_until_ = Clock::now() + kLogRest;
  if (runsc_denials_->kill_denial() && !ended_for_violation_) {
    // As a native jail ends on a call its policy kills: the whole sandbox, not just the thread
    // gVisor sent SIGSYS (which the tool may catch). jail owns the cgroup runsc runs in.
    ended_for_violation_ = true;
    signal_tool(state_, SIGKILL);
    state_.cgroup.kill_all();
  }
}

void Supervisor::on_signals() {
  signalfd_siginfo info{};
  while (::read(signals_.get(), &info, sizeof info) == sizeof info) {
    if (info.ssi_signo == SIGWINCH) {
      if (terminal_) terminal_->copy_window_size();
      continue;
    }
    jail::log().debug("forwarding signal {} to the tool", info.ssi_signo);
    signal_tool(state_, static_cast<int>(info.ssi_signo));
  }
}

bool Supervisor::run(std::optional<Clock::time_point> until) {
  while (!ended_) {
    // Slots: init, reports, signals, seccomp listener, pty master, caller input, caller output
    // (of the pty), stdout, stderr, runsc's debug log, the caller's stdin relayed to runsc, the
    // egress proxy's reports.
    const std::array<pollfd, 3> terminal =
        terminal_ ? terminal_->poll_entries()
                  : std::array<pollfd, 3>{{{-1, 0, 0}, {-1, 0, 0}, {-1, 0, 0}}};
    std::array<pollfd, 12> fds{{{state_.pidfd.get(), POLLIN, 0},
                                {state_.reports.fd(), POLLIN, 0},
                                {signals_.get(), POLLIN, 0},
                                {listener_due() ? denials_->fd() : -1, POLLIN, 0},
                                terminal[0],
                                terminal[1],
                                terminal[2],
                                output_ ? output_->poll_entry(0) : pollfd{-1, 0, 0},
                                output_ ? output_->poll_entry(1) : pollfd{-1, 0, 0},
                                {runsc_log_due() ? runsc_denials_->fd() : -1, POLLIN, 0},
                                input_ ? input_->poll_entry() : pollfd{-1, 0, 0},
                                {egress_ ? egress_->fd() : -1, POLLIN, 0}}};
    const int ready = ::poll(fds.data(), fds.size(), poll_timeout(until));
    if (ready < 0 && errno != EINTR) {
      throw Error("supervise", errno, fmt::format("poll failed: {}", std::strerror(errno)));
    }
    // A jail that has ended met its deadline, however late this round is.
    if (fds[0].revents == 0) on_deadline();
    if (fds[1].revents != 0) on_reports();
    if ((fds[3].revents & POLLIN) != 0) {
      // A kill rule ends the jail. In the Landlock mode a SIGKILLed init would leave the tool's
      // processes (the violating one among them) running: its lifeline is closed instead.
      if (denials_->handle_one(state_.landlock ? -1 : state_.pidfd.get()) && state_.landlock)
        signal_tool(state_, SIGKILL);
      denial_budget_.charge();
    } else if (fds[3].revents != 0) {
      // POLLHUP once the tool and all its children have exited: without this the loop would
      // spin until the init's exit, taking a CPU from the jail's own teardown.
      denials_->close_listener();
    }
    if (terminal_ && (fds[4].revents | fds[5].revents | fds[6].revents) != 0)
      terminal_->events({fds[4], fds[5], fds[6]});
    if (fds[7].revents != 0) output_->on_readable(0);
    if (fds[8].revents != 0) output_->on_readable(1);
    if (fds[9].revents != 0) on_runsc_log();
    if (fds[10].revents != 0 || (input_ && input_->wake() && Clock::now() >= *input_->wake()))
      input_->on_ready();
    if ((fds[2].revents & POLLIN) != 0) on_signals();
    if (fds[11].revents != 0) egress_->on_readable();
    ended_ = fds[0].revents != 0;
    if (ended_) ended_at_ = Clock::now();
    if (!ended_ && ready == 0 && until && Clock::now() >= *until) return false;
  }
  return true;
}

void Supervisor::take_layer_store() {
  if (UniqueFd store = state_.reports.take(child::ReportKind::layer_store); store.valid()) {
    if (state_.dry_run) state_.dry_run->take_store(std::move(store));
  }
}

void Supervisor::take_tmpfs_reports() {
  for (auto& [op, mount] : state_.reports.take_all(child::ReportKind::tmpfs)) {
    if (const auto id = mount_id_of(mount.get())) own_mounts_.push_back(*id);
    tmpfs_.emplace_back(op, std::move(mount));
  }
}

bool Supervisor::any_tmpfs_full() {
  bool full = false;
  for (auto& [op, mount] : tmpfs_) {
    struct statfs fs {};
    if (::fstatfs(mount.get(), &fs) != 0) continue;
    const std::uint64_t block = fs.f_bsize;
    // Full: less than 64 KiB or no inode left, where the tool's last writes failed.
    if (fs.f_bavail * block >= 64 * 1024 && fs.f_ffree > 0) continue;
    full = true;
    const std::size_t index = static_cast<std::size_t>(op);
    const auto& ops = state_.context.ops;
    jail::log().warn(
        "the jail's tmpfs at {} ended full ({:.1f} of {:.1f} MiB used{}): writes "
        "there failed with ENOSPC",
        index < ops.size() ? ops[index].target : std::string("?"),
        static_cast<double>((fs.f_blocks - fs.f_bavail) * block) / (1 << 20),
        static_cast<double>(fs.f_blocks * block) / (1 << 20),
        fs.f_ffree == 0 ? ", no inode left" : "");
  }
  tmpfs_.clear();  // the last references to those mounts: they go now
  return full;
}

Result Supervisor::finish() {
  state_.timeline.mark(child::Phase::jail_exited);
  RunRecord record;
  // The init has exited, and with it every process of the jail; whatever it wrote is queued.
  state_.reports.drain();
  // The tool's last output waits for the caller as long as the caller would wait for the tool:
  // no longer than its deadline and grace, if it has one.
  std::optional<Clock::time_point> give_up;
  if (state_.limits.timeout)
    give_up = state_.started + *state_.limits.timeout + state_.limits.kill_grace;
  if (output_) output_->drain(state_.stop_relays.get(), give_up);
  if (terminal_) terminal_->drain(state_.stop_relays.get(), give_up);
  const bool terminal_truncated = terminal_ && terminal_->truncated();
  terminal_.reset();  // the caller's terminal is back as it was before anything else is said
  while (::wait4(state_.pid, &record.init_status, __WALL, &record.init_usage) < 0 &&
         errno == EINTR) {
  }
  state_.waited = true;
  record.reports = state_.reports.reports();
  take_tmpfs_reports();
  record.tmpfs_full = any_tmpfs_full();
  record.wall_ms = std::chrono::duration<double, std::milli>(ended_at_ - state_.started).count();
  record.timed_out = timed_out_;
  record.output_truncated = (output_ && output_->truncated()) || terminal_truncated;
  if (denials_) {
    denials_->finish_broker();
    denials_->log_summary();
    record.denials = denials_->denials();
    record.violation = denials_->violation();
    record.open_files_full = denials_->open_files_full();
    record.syscalls_seen = denials_->seen();
    record.lookups = denials_->lookups();
  }
  if (runsc_denials_) {
    runsc_denials_->drain();
    runsc_denials_->log_repeats();
    record.denials = runsc_denials_->denials();
    // The sandbox ended for it, by the uncaught SIGSYS or by on_runsc_log's kill.
    record.violation = runsc_denials_->kill_denial();
    record.runsc_tool_status = runsc_denials_->tool_status();
  }
  // The tool never started under its filter: it looked nothing up.
  if (state_.lookups == LookupTrace::record && !record.lookups) record.lookups = Lookups{};
  const int cgroup_version = state_.cgroup.empty() ? 0 : state_.cgroup.version();
  if (!state_.cgroup.empty()) {
    record.cgroup_usage = state_.cgroup.usage();
    if (!state_.cgroup.remove()) {
      jail::log().error(
          "could not remove the jail's cgroup {}; it is empty and can be removed with rmdir",
          fmt::join(state_.cgroup.dirs(), " "));
    } else if (state_.runsc) {
      state_.runsc->mark_gone();
    }
  }
  state_.timeline.mark(child::Phase::cgroup_removed);
  Result result = decide_result(record, state_);
  result.timings = state_.timeline.phases(record.reports);
  result.masked = state_.masked;
  result.abstract_sockets_scoped = state_.abstract_sockets_scoped;
  result.isolation = state_.isolation;
  result.quotas = state_.quotas;
  result.limits_enforced = limit_enforcement(state_.limits, cgroup_version);
  if (egress_) result.connections = egress_->finish();
  // A run that never got past setup ran no tool: its session goes with the Recorder.
  if (state_.dry_run && result.outcome != Outcome::setup_error) {
    take_layer_store();
    result.dry_run = state_.dry_run->finish();
    if (result.dry_run->size_limit_hit) {
      jail::log().warn(
          "the dry run's layers filled their cap of {:.1f} MiB (--dry-run-size): the tool's "
          "last writes there failed with ENOSPC",
          static_cast<double>(*result.dry_run->size_limit_bytes) / (1 << 20));
      if (!result.limit_hit) result.limit_hit = Limit::dry_run_size;
    }
  }
  return result;
}

}  // namespace jail
