// jail::Process: the caller's handle on a running jail.
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "jail/error.hpp"
#include "jail/launch.hpp"
#include "process_state.hpp"
#include "runsc/sandbox.hpp"
#include "supervisor.hpp"

namespace jail {

Process::State::State() = default;
Process::State::~State() = default;

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

pid_t Process::pid() const {
  return state_->pid;
}

void Process::kill(int signal) {
  if (state_->waited) return;
  state_->signal_sent = signal;
  signal_tool(*state_, signal);
}

Result Process::wait() {
  auto result = wait_for(std::chrono::milliseconds::max());
  return std::move(*result);
}

std::optional<Result> Process::wait_for(std::chrono::milliseconds timeout) {
  if (state_->waited) throw Error("wait", EINVAL, "this jail has already been waited for");
  if (!state_->supervisor) state_->supervisor = std::make_unique<Supervisor>(*state_);
  std::optional<Supervisor::Clock::time_point> until;
  const auto now = Supervisor::Clock::now();
  if (timeout < std::chrono::duration_cast<std::chrono::milliseconds>(
                    Supervisor::Clock::time_point::max() - now)) {
    until = now + timeout;
  }
  if (!state_->supervisor->run(until)) return std::nullopt;
  return state_->supervisor->finish();
}

int Process::stdin_fd() const {
  return state_->stdio_pipes[0].get();
}
int Process::stdout_fd() const {
  return state_->stdio_pipes[1].get();
}
int Process::stderr_fd() const {
  return state_->stdio_pipes[2].get();
}
void Process::close_stdin() {
  state_->stdio_pipes[0].reset();
}

}  // namespace jail
