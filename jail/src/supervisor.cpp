// Parent side: the supervisor. One poll loop over the jail init's pidfd, the report socket, the
// tool's seccomp listener, the pty relay, the wall-clock deadline and (for the CLI) a signalfd of
// the signals to forward; then the Result.
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "child/report.hpp"
#include "jail/error.hpp"
#include "jail/launch.hpp"
#include "outcome.hpp"
#include "process_state.hpp"
#include "seccomp/denials.hpp"
#include "terminal_relay.hpp"

namespace jail {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::array kForwardedSignals = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

UniqueFd forwarding_signalfd(bool pty) {
  sigset_t set;
  sigemptyset(&set);
  for (const int sig : kForwardedSignals) sigaddset(&set, sig);
  // The caller's window changes reach the tool through the pty, not as a forwarded signal.
  if (pty) sigaddset(&set, SIGWINCH);
  return UniqueFd(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
}

void send_signal(const Process::State& state, int signal) {
  ::syscall(SYS_pidfd_send_signal, state.pidfd.get(), signal, nullptr, 0);
}

// The wall-clock limit: SIGTERM to the tool at the deadline, SIGKILL to the whole jail after the
// grace. Killing the init ends the pid namespace; the cgroup kill catches anything that is in the
// jail's cgroup but was never in its namespace.
class Deadline {
 public:
  explicit Deadline(const Process::State& state)
      : armed_(state.limits.timeout.has_value()),
        next_(state.started + state.limits.timeout.value_or(std::chrono::milliseconds(0))),
        grace_(state.limits.kill_grace) {}

  // Milliseconds poll may sleep: -1 for ever.
  [[nodiscard]] int poll_timeout() const {
    if (!armed_) return -1;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(next_ - Clock::now()).count();
    return static_cast<int>(std::clamp<long long>(left, 0, 60'000));
  }

  void on_tick(Process::State& state) {
    if (!armed_ || Clock::now() < next_) return;
    if (!expired_) {
      expired_ = true;
      spdlog::info("timeout after {} ms: SIGTERM to the tool, SIGKILL in {} ms",
                   state.limits.timeout->count(), grace_.count());
      send_signal(state, SIGTERM);
      next_ = Clock::now() + grace_;
    } else {
      armed_ = false;
      spdlog::info("the tool outlived the kill grace: SIGKILL to the jail");
      send_signal(state, SIGKILL);
      state.cgroup.kill_all();
    }
  }

  [[nodiscard]] bool expired() const { return expired_; }

 private:
  bool armed_;
  Clock::time_point next_;
  std::chrono::milliseconds grace_;
  bool expired_ = false;
};

}  // namespace

Process::Process(std::unique_ptr<State> state) : state_(std::move(state)) {}
Process::Process(Process&&) noexcept = default;
Process& Process::operator=(Process&&) noexcept = default;

Process::~Process() {
  if (state_ && !state_->waited && state_->pidfd.valid()) {
    send_signal(*state_, SIGKILL);
    int status = 0;
    while (::waitpid(state_->pid, &status, __WALL) < 0 && errno == EINTR) {
    }
  }
}

pid_t Process::pid() const { return state_->pid; }

void Process::kill(int signal) {
  if (state_->waited) return;
  state_->signal_sent = signal;
  send_signal(*state_, signal);
}

Result Process::wait() {
  if (state_->waited) throw Error("wait", EINVAL, "Process::wait called twice");
  State& state = *state_;
  UniqueFd signals = state.forward_signals ? forwarding_signalfd(state.pty) : UniqueFd();
  Deadline deadline(state);
  RunRecord record;
  std::unique_ptr<DenialHandler> denials;
  std::unique_ptr<TerminalRelay> relay;

  for (bool init_alive = true; init_alive;) {
    // Slots: 0 init, 1 reports, 2 signals, 3 seccomp listener, 4 pty master, 5 caller input.
    std::array<pollfd, 6> fds{{{state.pidfd.get(), POLLIN, 0},
                               {state.reports.fd(), POLLIN, 0},
                               {signals.get(), POLLIN, 0},
                               {denials ? denials->fd() : -1, POLLIN, 0},
                               {relay ? relay->master() : -1, POLLIN, 0},
                               {relay ? relay->input() : -1, POLLIN, 0}}};
    if (::poll(fds.data(), fds.size(), deadline.poll_timeout()) < 0 && errno != EINTR) {
      throw Error("supervise", errno, fmt::format("poll failed: {}", std::strerror(errno)));
    }
    deadline.on_tick(state);
    if (fds[1].revents != 0) {
      state.reports.drain();
      if (UniqueFd listener = state.reports.take(child::ReportKind::seccomp_listener); listener.valid()) {
        denials = std::make_unique<DenialHandler>(std::move(listener), state.policy);
      }
      if (UniqueFd master = state.reports.take(child::ReportKind::terminal); master.valid()) {
        relay = std::make_unique<TerminalRelay>(std::move(master), state.pty_input, state.pty_output);
      }
    }
    if ((fds[3].revents & POLLIN) != 0) (void)denials->handle_one(state.pidfd.get());
    if (fds[4].revents != 0) relay->on_master_readable();
    if (fds[5].revents != 0) relay->on_input_readable();
    if ((fds[2].revents & POLLIN) != 0) {
      signalfd_siginfo info{};
      while (::read(signals.get(), &info, sizeof info) == sizeof info) {
        if (info.ssi_signo == SIGWINCH) {
          if (relay) relay->copy_window_size();
          continue;
        }
        spdlog::debug("forwarding signal {} to the tool", info.ssi_signo);
        send_signal(state, static_cast<int>(info.ssi_signo));
      }
    }
    init_alive = fds[0].revents == 0;
  }

  // The init has exited, and with it every process of the jail; whatever it wrote is queued.
  state.reports.drain();
  if (relay) relay->drain();
  relay.reset();  // the caller's terminal is back as it was before anything else is reported
  while (::wait4(state.pid, &record.init_status, __WALL, &record.init_usage) < 0 && errno == EINTR) {
  }
  state.waited = true;
  record.reports = state.reports.reports();
  record.wall_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - state.started).count();
  record.timed_out = deadline.expired();
  if (denials) {
    record.denials = denials->denials();
    record.violation = denials->violation();
  }
  if (!state.cgroup.empty()) {
    record.cgroup_usage = state.cgroup.usage();
    if (!state.cgroup.remove()) {
      spdlog::error("could not remove the jail's cgroup {}; it is empty and can be removed with rmdir",
                    fmt::join(state.cgroup.dirs(), " "));
    }
  }
  return decide_result(record, state);
}

}  // namespace jail
