// jail::launch — start a Spec, get a Process; Process::wait gives the Result.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>

#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>

#include "jail/error.hpp"  // what launch() and Process's members throw
#include "jail/result.hpp"
#include "jail/spec.hpp"

namespace jail {

// Thread safety: pid(), running(), wait(), wait_for() and kill() may be called from any number of
// threads at once. stdin_fd(), stdout_fd(), stderr_fd() and close_stdin() may too, but a thread
// that closes stdin must not race one that writes to it. Moving or destroying a Process must not
// race any other use of it.
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
  // True until the jail has ended (every process of it reaped, its cgroup removed) and its Result
  // is ready; never blocks.
  [[nodiscard]] bool running() const;
  // Waits until the jail has ended, then reports. It can be called again, from any thread, and
  // every call returns the same Result (or throws the same jail::Error). The supervisor
  // (timeouts, limits, seccomp answers, relays) runs on a thread of the Process's own from
  // launch on, so the caller may do anything meanwhile — read the tool's stdout to its end
  // first, or wait late: the Result is the same.
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

// What run() does with the tool's output under Stdio::pipe (it closes the tool's stdin, so the
// tool reads end-of-file). Both streams are read as they come, to their end, whatever their
// size: a tool can never block on a full pipe.
struct RunOutput {
  // The most bytes of each stream kept in Result::stdout_bytes / stderr_bytes; what comes after
  // is read and dropped, and Result::stdout_truncated / stderr_truncated say so.
  std::uint64_t keep_bytes = 16u << 20;
  // When set, each chunk of that stream goes here as it arrives (on the calling thread) instead
  // of into the Result; keep_bytes does not apply to it.
  std::function<void(std::string_view)> on_stdout;
  std::function<void(std::string_view)> on_stderr;

  // A readable default: RunOutput::keep(1 << 20), RunOutput::streamed(out, err).
  [[nodiscard]] static RunOutput keep(std::uint64_t bytes) {
    RunOutput output;
    output.keep_bytes = bytes;
    return output;
  }
  [[nodiscard]] static RunOutput streamed(std::function<void(std::string_view)> out,
                                          std::function<void(std::string_view)> err) {
    RunOutput output;
    output.on_stdout = std::move(out);
    output.on_stderr = std::move(err);
    return output;
  }
};

// launch + wait, with launch's errors turned into a setup_error Result. Under Stdio::pipe the
// tool's output is read while it runs, as `output` says; with other Stdio, `output` is unused.
[[nodiscard]] Result run(const Spec& spec, const RunOutput& output = {});

}  // namespace jail
