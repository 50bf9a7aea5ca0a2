// Parent side: the supervisor. One poll loop over the jail init's pidfd, the report pipe and
// (for the CLI) a signalfd of the signals to forward; then the Result.
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "child/report.hpp"
#include "jail/error.hpp"
#include "jail/launch.hpp"
#include "process_state.hpp"
#include "setup_failure.hpp"

namespace jail {
namespace {

constexpr std::array kForwardedSignals = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

UniqueFd forwarding_signalfd() {
  sigset_t set;
  sigemptyset(&set);
  for (const int sig : kForwardedSignals) sigaddset(&set, sig);
  return UniqueFd(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
}

// Reads whole records; the pipe is non-blocking once the init has exited.
void read_reports(int fd, std::vector<child::Report>& reports, bool& open) {
  child::Report report{};
  for (;;) {
    const ssize_t n = ::read(fd, &report, sizeof report);
    if (n == static_cast<ssize_t>(sizeof report)) {
      reports.push_back(report);
      continue;
    }
    if (n == 0) open = false;
    if (n < 0 && errno == EINTR) continue;
    return;  // EAGAIN, EOF, or a torn record (impossible below PIPE_BUF)
  }
}

double to_ms(const timeval& time) { return time.tv_sec * 1000.0 + time.tv_usec / 1000.0; }

void fill_from_status(Result& result, int status) {
  if (WIFEXITED(status)) {
    result.outcome = Outcome::exited;
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.outcome = Outcome::signaled;
    result.signal = WTERMSIG(status);
  }
}

}  // namespace

Process::Process(std::unique_ptr<State> state) : state_(std::move(state)) {}
Process::Process(Process&&) noexcept = default;
Process& Process::operator=(Process&&) noexcept = default;

Process::~Process() {
  if (state_ && !state_->waited && state_->pidfd.valid()) {
    ::syscall(SYS_pidfd_send_signal, state_->pidfd.get(), SIGKILL, nullptr, 0);
    int status = 0;
    while (::waitpid(state_->pid, &status, __WALL) < 0 && errno == EINTR) {
    }
  }
}

pid_t Process::pid() const { return state_->pid; }

void Process::kill(int signal) {
  if (state_->waited) return;
  state_->signal_sent = signal;
  ::syscall(SYS_pidfd_send_signal, state_->pidfd.get(), signal, nullptr, 0);
}

Result Process::wait() {
  if (state_->waited) throw Error("wait", EINVAL, "Process::wait called twice");
  State& state = *state_;
  UniqueFd signals = state.forward_signals ? forwarding_signalfd() : UniqueFd();
  std::vector<child::Report> reports;
  bool reports_open = true;

  for (bool init_alive = true; init_alive;) {
    std::array<pollfd, 3> fds{{{state.pidfd.get(), POLLIN, 0},
                               {reports_open ? state.report_read.get() : -1, POLLIN, 0},
                               {signals.get(), POLLIN, 0}}};
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw Error("supervise", errno, fmt::format("poll failed: {}", std::strerror(errno)));
    }
    if (fds[1].revents != 0) read_reports(state.report_read.get(), reports, reports_open);
    if ((fds[2].revents & POLLIN) != 0) {
      signalfd_siginfo info{};
      while (::read(signals.get(), &info, sizeof info) == sizeof info) {
        spdlog::debug("forwarding signal {} to the tool", info.ssi_signo);
        ::syscall(SYS_pidfd_send_signal, state.pidfd.get(), info.ssi_signo, nullptr, 0);
      }
    }
    init_alive = fds[0].revents == 0;
  }

  // The init has exited, and with it every process of the jail; whatever it wrote is in the pipe.
  ::fcntl(state.report_read.get(), F_SETFL, O_NONBLOCK);
  if (reports_open) read_reports(state.report_read.get(), reports, reports_open);

  int status = 0;
  rusage usage{};
  while (::wait4(state.pid, &status, __WALL, &usage) < 0 && errno == EINTR) {
  }
  state.waited = true;

  Result result;
  result.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                             state.started)
                       .count();
  // The init reaped the tool, so its children's usage includes the tool's.
  result.cpu_user_ms = to_ms(usage.ru_utime);
  result.cpu_sys_ms = to_ms(usage.ru_stime);
  result.peak_memory_bytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;

  const child::Report* setup = nullptr;
  const child::Report* exec = nullptr;
  const child::Report* exited = nullptr;
  for (const auto& report : reports) {
    if (report.kind == child::ReportKind::setup_failed && setup == nullptr) setup = &report;
    if (report.kind == child::ReportKind::exec_failed && exec == nullptr) exec = &report;
    if (report.kind == child::ReportKind::tool_exited) exited = &report;
  }
  if (setup != nullptr) {
    result.outcome = Outcome::setup_error;
    result.error = describe_setup_failure(*setup, state.context);
  } else if (exec != nullptr) {
    result.outcome = Outcome::setup_error;
    result.error = describe_exec_failure(exec->err, state.context);
  } else if (exited != nullptr) {
    fill_from_status(result, exited->detail);
  } else if (WIFSIGNALED(status) && WTERMSIG(status) == state.signal_sent) {
    // Killed through Process::kill (SIGKILL ends the init before it can report).
    fill_from_status(result, status);
  } else {
    result.outcome = Outcome::internal_error;
    result.error = SetupFailure{
        "supervise", 0,
        fmt::format("the jail's init (host pid {}) ended without a report (wait status {:#x})",
                    state.pid, status)};
  }
  return result;
}

}  // namespace jail
