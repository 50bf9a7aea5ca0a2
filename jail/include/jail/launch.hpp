// jail::launch — start a Spec, get a Process; Process::wait gives the Result.
#pragma once

#include <sys/types.h>

#include <memory>

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
  ~Process();

  // The host pid of the jail's init (the reaper that is PID 1 inside).
  [[nodiscard]] pid_t pid() const;
  // Runs the supervisor until the jail has ended, then reports. Call once.
  [[nodiscard]] Result wait();
  // Sends `signal` to the tool (through the reaper, which forwards it). SIGKILL ends the whole jail.
  void kill(int signal);

 private:
  std::unique_ptr<State> state_;
};

// Throws jail::Error when the Spec is invalid or the jail cannot be created; failures of steps
// inside the new namespaces are reported by wait() as Outcome::setup_error.
[[nodiscard]] Process launch(const Spec& spec);

// launch + wait, with launch's errors turned into a setup_error Result.
[[nodiscard]] Result run(const Spec& spec);

}  // namespace jail
