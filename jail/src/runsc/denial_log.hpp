// Parent side: the denials of a gVisor run. gVisor's sentry applies the policy itself (loaded by
// jail's policy loader, or from an OCI profile), so no seccomp notification reaches jail; the
// only record of a denied call is
// the sentry's debug log line "[tgid: tid] Syscall N: denied by seccomp". runsc writes its debug
// log to a pipe jail reads (never a file: a tool could fill the disk with it), and this class
// keeps what the native DenialHandler keeps — the count and the first few — in bounded memory.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "jail/result.hpp"
#include "policy/policy.hpp"
#include "repeat_filter.hpp"
#include "unique_fd.hpp"

namespace jail {

// One denial as the sentry logged it.
struct LoggedDenial {
  int number = -1;
  pid_t pid = 0;        // the thread group, in the sandbox's pid namespace
  bool killed = false;  // "killed by seccomp" (the thread was ended) rather than "denied"
};

// The sentry's line for a denied call, found anywhere in `line` (another runsc process's long
// log write may have been split around it in the pipe); nullopt for every other line.
[[nodiscard]] std::optional<LoggedDenial> parse_denial_line(std::string_view line);

class RunscDenialLog {
 public:
  RunscDenialLog(UniqueFd log_read_end, std::shared_ptr<const policy::Policy> policy);

  [[nodiscard]] int fd() const { return log_.get(); }
  // Reads what is there (the fd is non-blocking) and records the denials in it.
  void on_readable();
  // Every writer is gone (runsc has exited): read to the end, then stop polling.
  void drain();
  [[nodiscard]] bool open() const { return log_.valid(); }

  [[nodiscard]] const Denials& denials() const { return denials_; }
  // As DenialHandler's: how many more of each kind came. Once, after drain().
  void log_repeats() const { repeats_.log_repeats("denied", "denied"); }
  // The first denial the policy answers with `kill` whatever the arguments: the run's
  // violation. The loader's filter has the sentry end the process for it; under an OCI profile
  // gVisor only sends the thread SIGSYS (seccomp/oci_export.cpp), which a tool may catch. Either
  // way the supervisor then ends the sandbox, as a native jail ends on such a call.
  [[nodiscard]] const std::optional<Violation>& kill_denial() const { return kill_denial_; }
  // How the tool ended, as the sentry logged it ("application exiting with exit status N" /
  // "with killed by signal N"), as a wait status: runsc run's own exit folds a death by signal
  // n into 128+n, which a tool's exit(128+n) reads the same as. nullopt when not logged (the
  // tool never started).
  [[nodiscard]] std::optional<int> tool_status() const { return tool_status_; }

 private:
  // false at end of file or on an error: the log is then closed.
  bool read_some();
  void on_line(std::string_view line);

  UniqueFd log_;
  std::shared_ptr<const policy::Policy> policy_;
  std::string partial_;  // the unfinished last line, only its tail kept
  Denials denials_;
  RepeatFilter repeats_;
  std::optional<Violation> kill_denial_;
  std::optional<int> tool_status_;
};

// The wait status in the sentry's line for the tool's end, found anywhere in `line`; nullopt
// for every other line.
[[nodiscard]] std::optional<int> parse_tool_exit_line(std::string_view line);

}  // namespace jail
