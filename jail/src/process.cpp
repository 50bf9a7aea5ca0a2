// jail::Process: the caller's handle on a running jail. The supervisor runs on a thread of the
// Process's own; wait() and wait_for() only wait for what it reports.
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>
#include <system_error>
#include <utility>

#include <fmt/format.h>

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
    if (!state.waited) end_and_reap(state);
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
  // The jail exists already: without a supervisor nothing would ever reap it or enforce its
  // limits, so a failure here ends it before the caller hears of it.
  const auto fail = [&](int err, const std::string& message) {
    end_and_reap(*state_);
    throw Error("supervisor", err, message);
  };
  state_->stop_relays = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!state_->stop_relays.valid()) {
    const int err = errno;
    fail(err, fmt::format("cannot make the eventfd that ends the jail's relays: {}; the caller "
                          "is out of file descriptors (raise RLIMIT_NOFILE)",
                          std::strerror(err)));
  }
  State* const shared = state_.get();
  try {
    state_->supervisor_thread = std::thread([shared] { supervise(*shared); });
  } catch (const std::system_error& error) {
    fail(error.code().value(),
         fmt::format("cannot start the thread that supervises the jail: {}; the caller is at its "
                     "limit of processes and threads (RLIMIT_NPROC, or its pids cgroup): raise "
                     "it, or run fewer jails at once",
                     std::strerror(error.code().value())));
  }
}

Process::State& Process::state() const {
  if (!state_) {
    throw Error("process", EINVAL, "this Process was moved from: use the Process it was moved to");
  }
  return *state_;
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
  return state().pid;
}

void Process::kill(int signal) {
  if (signal == SIGSTOP) {
    throw Error("kill", EINVAL,
                "SIGSTOP cannot be forwarded: it would stop only the jail's init; send SIGTSTP");
  }
  if (signal <= 0 || signal >= NSIG) {
    throw Error(
        "kill", EINVAL,
        fmt::format("kill({}): not a signal number; give one from 1 to {}", signal, NSIG - 1));
  }
  if (signal > 31 && signal < SIGRTMIN) {
    throw Error("kill", EINVAL,
                fmt::format("kill({}): the C library keeps signals 32 to {} for itself; give 1 to "
                            "31 or a real-time signal from SIGRTMIN ({})",
                            signal, SIGRTMIN - 1, SIGRTMIN));
  }
  State& jail = state();
  if (jail.waited) return;
  note_signal(jail, signal);
  signal_tool(jail, signal);
}

Result Process::wait() {
  return *wait_for(std::chrono::milliseconds::max());
}

bool Process::running() const {
  State& jail = state();
  const std::lock_guard lock(jail.mutex);
  return !jail.ended;
}

std::optional<Result> Process::wait_for(std::chrono::milliseconds timeout) {
  State& jail = state();
  std::unique_lock lock(jail.mutex);
  const auto ended = [&] { return jail.ended; };
  // A timeout past what the clock can add (wait() passes the largest) waits without one.
  const auto now = std::chrono::steady_clock::now();
  if (timeout >= std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::time_point::max() - now)) {
    jail.supervisor_ended.wait(lock, ended);
  } else if (!jail.supervisor_ended.wait_for(lock, timeout, ended)) {
    return std::nullopt;
  }
  // `result` and `error` are final once `ended` is set: every waiter, on any thread and at any
  // later time, gets the same Result (or the same exception).
  lock.unlock();
  std::call_once(jail.joined, [&] { jail.supervisor_thread.join(); });
  if (jail.error) std::rethrow_exception(jail.error);
  return jail.result;
}

int Process::stdin_fd() const {
  return state().stdio_pipes[0].get();
}
int Process::stdout_fd() const {
  return state().stdio_pipes[1].get();
}
int Process::stderr_fd() const {
  return state().stdio_pipes[2].get();
}
void Process::close_stdin() {
  state().stdio_pipes[0].reset();
}

}  // namespace jail
