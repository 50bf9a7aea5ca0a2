// jail::Process: the caller's handle on a running jail. The supervisor runs on a thread of the
// Process's own; wait() and wait_for() only wait for what it reports.
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <string>
#include <utility>

#include "jail/error.hpp"
#include "jail/launch.hpp"
#include "log.hpp"
#include "process_state.hpp"
#include "runsc/sandbox.hpp"
#include "spawn_support.hpp"
#include "supervisor.hpp"

namespace jail {
namespace {

void supervise(Process::State& state) noexcept {
  // A write to a reader that went away (the caller's stdout closed by `| head`) gives the relays
  // EPIPE. Blocked here, the SIGPIPE stays pending on this thread, which ends with it, instead
  // of ending the caller's process.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  std::optional<Result> result;
  std::exception_ptr error;
  try {
    Supervisor supervisor(state);
    (void)supervisor.run(std::nullopt);
    result = supervisor.finish();
  } catch (...) {
    error = std::current_exception();
    // Nothing outlives its owner: a supervisor that failed still ends and reaps the jail.
    if (!state.waited) {
      kill_and_reap(state.pidfd.get(), state.pid);
      state.waited = true;
    }
  }
  const std::lock_guard lock(state.mutex);
  state.result = std::move(result);
  state.error = error;
  state.ended = true;
  state.supervisor_ended.notify_all();
}

// Ends the jail if it still runs, and waits for the supervisor to have reaped it and removed its
// cgroup.
void end_and_join(Process::State& state) {
  if (!state.supervisor_thread.joinable()) return;
  {
    const std::lock_guard lock(state.mutex);
    if (!state.ended) {
      note_signal(state, SIGKILL);
      signal_tool(state, SIGKILL);
    }
  }
  const std::uint64_t one = 1;
  (void)!::write(state.stop_relays.get(), &one, sizeof one);
  state.supervisor_thread.join();
}

}  // namespace

Process::State::State() = default;
Process::State::~State() = default;

Process::Process(std::unique_ptr<State> state) : state_(std::move(state)) {
  state_->stop_relays = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  State* const shared = state_.get();
  state_->supervisor_thread = std::thread([shared] { supervise(*shared); });
}

Process::Process(Process&&) noexcept = default;

Process& Process::operator=(Process&& other) noexcept {
  if (this == &other) return *this;
  // The jail this Process held ends as it would at its destruction.
  Process old(std::move(*this));
  state_ = std::move(other.state_);
  return *this;
}

Process::~Process() {
  if (state_) end_and_join(*state_);
}

pid_t Process::pid() const {
  return state_->pid;
}

void Process::kill(int signal) {
  if (signal == SIGSTOP) {
    throw Error("kill", EINVAL,
                "SIGSTOP cannot be forwarded: it would stop only the jail's init; send SIGTSTP");
  }
  if (signal <= 0 || signal >= NSIG) {
    throw Error("kill", EINVAL, "kill(" + std::to_string(signal) + "): not a signal number");
  }
  if (state_->waited) return;
  note_signal(*state_, signal);
  signal_tool(*state_, signal);
}

Result Process::wait() {
  auto result = wait_for(std::chrono::milliseconds::max());
  return std::move(*result);
}

std::optional<Result> Process::wait_for(std::chrono::milliseconds timeout) {
  std::unique_lock lock(state_->mutex);
  if (state_->reported) throw Error("wait", EINVAL, "this jail has already been waited for");
  const auto ended = [&] { return state_->ended; };
  // A timeout past what the clock can add (wait() passes the largest) waits without one.
  const auto now = std::chrono::steady_clock::now();
  if (timeout >= std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::time_point::max() - now)) {
    state_->supervisor_ended.wait(lock, ended);
  } else if (!state_->supervisor_ended.wait_for(lock, timeout, ended)) {
    return std::nullopt;
  }
  state_->reported = true;
  lock.unlock();
  state_->supervisor_thread.join();
  if (state_->error) std::rethrow_exception(state_->error);
  return std::move(state_->result);
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
