// jail::launch — start a Spec, get a Process; Process::wait gives the Result.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>

#include "jail/result.hpp"
#include "jail/spec.hpp"

namespace jail {

class Process {
 public:
  struct State;
  explicit Process(std::unique_ptr<State> state);
  Process(Process&&) noexcept;
  Process& operator=(Process&&) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  // A Process that was never waited for is killed and reaped: nothing outlives its owner.
  // Assigning over a Process does the same to the jail it held. Every member but the destructor
  // throws jail::Error on a Process that was moved from.
  ~Process();

  // The host pid of the jail's init (the reaper that is PID 1 inside); under runsc, of the keeper
  // that started `runsc run` (jail's own child, outside the jail's cgroup).
  [[nodiscard]] pid_t pid() const;
  // Waits until the jail has ended, then reports. Once it has reported, the Process is
  // finished: a second call throws, as does one that waited at the same time on another
  // thread and lost the race. The supervisor (timeouts, limits, seccomp answers, relays)
  // runs on a thread of the Process's own from launch on, so the caller may do anything
  // meanwhile — read the tool's stdout to its end first, or wait late: the Result is the same.
  [[nodiscard]] Result wait();
  // The same, but gives up after `timeout` (the jail keeps running; call again later).
  [[nodiscard]] std::optional<Result> wait_for(std::chrono::milliseconds timeout);

  // With Stdio::pipe: the caller's ends of the tool's stdin, stdout and stderr; -1 otherwise.
  // The Process owns them; close_stdin() sends the tool end-of-file.
  [[nodiscard]] int stdin_fd() const;
  [[nodiscard]] int stdout_fd() const;
  [[nodiscard]] int stderr_fd() const;
  void close_stdin();
  // Sends `signal` to the tool (through the reaper, which forwards it). SIGKILL ends the whole
  // jail. Safe from any thread. Throws jail::Error for SIGSTOP, which would stop only the
  // reaper (send SIGTSTP), and for a number that is not a signal.
  void kill(int signal);

 private:
  // The jail's state; throws jail::Error on a Process that was moved from.
  [[nodiscard]] State& state() const;

  std::unique_ptr<State> state_;
};

// Safe to call from several threads at once: every Process is independent.
// Throws jail::Error when the Spec is invalid or the jail cannot be created; failures of steps
// inside the new namespaces are reported by wait() as Outcome::setup_error. The jail's first
// process is cloned from the caller and unmaps the caller's heap once the tool (or runsc) runs,
// so a run in flight holds no copy of it (README, "As a library").
[[nodiscard]] Process launch(const Spec& spec);

// launch + wait, with launch's errors turned into a setup_error Result.
[[nodiscard]] Result run(const Spec& spec);

}  // namespace jail
