// Runs the real `jail` binary the way a caller would: fork + exec, stdout and stderr captured
// through pipes, a deadline, optionally as an unprivileged uid and with an extra inherited fd.
// Every behaviour suite is parameterised over the caller (root and an unprivileged uid).
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jail_test {

using namespace std::chrono_literals;

enum class Caller { root, unprivileged };

// The unprivileged caller; also the host identity a root caller's tool is mapped to.
inline constexpr uid_t kNobodyUid = 65534;
inline constexpr gid_t kNobodyGid = 65534;
// A root caller's tool runs as this identity inside its user namespace.
inline constexpr uid_t kJailUid = 1000;
inline constexpr gid_t kJailGid = 1000;

// Set in the caller's environment of every run; must never reach the tool unless passed.
inline constexpr const char* kCallerSecretName = "JAIL_ITEST_SECRET";
inline constexpr const char* kCallerSecretValue = "caller-secret-value";

// A descriptor handed to jail without CLOEXEC: `fd` of the test process becomes `as` in jail.
struct ExtraFd {
  int fd;
  int as;
};

struct RunOptions {
  Caller caller = Caller::root;
  std::string cwd;                          // host working directory of jail; empty: the test's own
  std::chrono::milliseconds timeout = 30s;  // scaled (../support/time_scale.hpp)
  std::optional<ExtraFd> extra_fd;
  std::string stdin_data;              // jail's stdin; /dev/null when empty
  int stdin_fd = -1;                   // jail's stdin (e.g. a file) instead of either
  bool stdin_closed = false;           // jail starts with fd 0 closed (`jail … <&-`)
  bool own_process_group = false;      // jail leads a process group, as a shell's job does
  int stdout_fd = -1;                  // jail's stdout (e.g. a terminal) instead of the pipe
  int stderr_fd = -1;                  // jail's stderr (e.g. a pipe nobody reads), the same
  std::vector<std::string> extra_env;  // K=V added to (or replacing in) the caller's environment
  // A program (absolute path, and its arguments) that jail is started through, which execs it:
  // e.g. the no_userns probe, a host whose user namespaces are refused.
  std::vector<std::string> wrapper;
};

struct RunResult {
  int exit_code = -1;  // jail's exit status; -1 unless it exited normally
  int signal = 0;      // the signal that killed jail itself, 0 if none
  bool timed_out = false;
  std::string out;
  std::string err;
};

// For assertion messages: exit status, signal and both outputs.
std::string describe(const RunResult& result);

// A running jail. The destructor SIGKILLs and reaps it if it is still running, and removes the
// cgroups that left behind (so does wait() when it kills at its timeout).
class JailProcess {
 public:
  JailProcess(const std::vector<std::string>& args, const RunOptions& options);
  ~JailProcess();
  JailProcess(const JailProcess&) = delete;
  JailProcess& operator=(const JailProcess&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] bool running() const { return !exited_; }
  // Reads until stdout contains `needle`; false on timeout or if jail exits first. Every timeout
  // here is a deadline, stretched by JAIL_TEST_TIME_SCALE (../support/time_scale.hpp).
  [[nodiscard]] bool wait_for_stdout(std::string_view needle, std::chrono::milliseconds timeout);
  // Waits for jail to exit (SIGKILL after `timeout`) and returns what it did.
  RunResult wait(std::chrono::milliseconds timeout = 30s);

 private:
  using Clock = std::chrono::steady_clock;
  // Polls the pipes and the pidfd until `stop()` or the deadline.
  template <typename Stop>
  void pump(Clock::time_point deadline, Stop stop);
  void read_some(int& fd, std::string& sink);

  pid_t pid_ = -1;
  int pidfd_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool exited_ = false;
  int status_ = 0;
  std::string out_;
  std::string err_;
};

// Runs jail with `args` (everything after the program name) to completion.
RunResult run_jail(const std::vector<std::string>& args, const RunOptions& options = {});

// A fresh directory under /var/tmp (not /tmp: the jail mounts its own /tmp over it), mode 0755,
// owned by the unprivileged uid so that either caller's tool may write there when it is bound
// read-write. Removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::string operator/(std::string_view name) const;

 private:
  std::string path_;
};

// Writes `content` to `path`, chmod `mode`, owned by the unprivileged uid.
void write_file(const std::string& path, std::string_view content, mode_t mode = 0644);
// The whole file, or std::nullopt if it cannot be read.
std::optional<std::string> read_file(const std::string& path);
// Host processes whose command line contains `marker` (an argument no one else uses); -1 when
// /proc cannot be read.
int processes_with(const std::string& marker);
// After a test SIGKILLed jail (which leaves it no moment to remove its cgroups; the next jail
// would, a minute later): removes the cgroups named for that jail (jail-<pid>-*) in every
// hierarchy, once the processes in them have gone. Returns what it could not remove.
std::vector<std::string> remove_cgroups_left_by(pid_t jail_pid);
std::vector<std::string> split_lines(std::string_view text);
// Joins argument lists: concat({probe_mount(), {"--", probe("list_fds")}}).
std::vector<std::string> concat(std::initializer_list<std::vector<std::string>> parts);
std::string trim(std::string_view text);
// What `sh -c COMMAND` wrote to stdout and stderr together, as the test process (root) runs it.
std::string shell_output(const std::string& command);

// `--ro-bind <probe dir>:/probes`; run a probe as `/probes/<name>`.
std::vector<std::string> probe_mount();
std::string probe(std::string_view name);

// Base fixture: parameterised over the caller, with a scratch cwd both callers can read.
class CallerTest : public ::testing::TestWithParam<Caller> {
 protected:
  [[nodiscard]] bool as_root() const { return GetParam() == Caller::root; }
  [[nodiscard]] Caller caller() const { return GetParam(); }
  // The uid/gid the tool has inside by default: 1000 for a root caller, the caller's otherwise.
  [[nodiscard]] uid_t inside_uid() const { return as_root() ? kJailUid : kNobodyUid; }
  [[nodiscard]] gid_t inside_gid() const { return as_root() ? kJailGid : kNobodyGid; }
  // Runs jail as this suite's caller, in `cwd_` unless `options.cwd` says otherwise.
  RunResult run(const std::vector<std::string>& args, RunOptions options = {});
  // Starts jail as this suite's caller without waiting for it.
  std::unique_ptr<JailProcess> start(const std::vector<std::string>& args, RunOptions options = {});

  TempDir cwd_;
};

std::string caller_name(const ::testing::TestParamInfo<Caller>& info);

}  // namespace jail_test

#define JAIL_INSTANTIATE_FOR_CALLERS(suite)                                            \
  INSTANTIATE_TEST_SUITE_P(                                                            \
      Callers, suite,                                                                  \
      ::testing::Values(::jail_test::Caller::root, ::jail_test::Caller::unprivileged), \
      ::jail_test::caller_name)
