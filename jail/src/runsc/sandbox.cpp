#include "runsc/sandbox.hpp"

#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "log.hpp"

#include "cgroup/cgroup.hpp"
#include "child/caller_memory.hpp"
#include "child/timing.hpp"
#include "jail/closed_stdio.hpp"
#include "jail/error.hpp"
#include "oci/bundle.hpp"
#include "process_state.hpp"
#include "runsc/keeper.hpp"
#include "runsc/policy_loader.hpp"
#include "runsc/stale_runs.hpp"
#include "seccomp/oci_export.hpp"
#include "seccomp/prepare.hpp"
#include "spawn_support.hpp"
#include "spec_check.hpp"
#include "supervisor.hpp"
#include "unique_fd.hpp"

namespace jail {
namespace {

struct Argv {
  std::vector<std::string> words;
  std::vector<char*> pointers;
  char* const* data() {
    pointers.clear();
    for (auto& word : words) pointers.push_back(word.data());
    pointers.push_back(nullptr);
    return pointers.data();
  }
};

// runsc's debug log: fd 3 in runsc's process (RunscExec::debug_log).
constexpr const char* kDebugLogArgument = "--debug-log=/proc/self/fd/3";

// Runs a runsc command (its output is not wanted); true if it exited 0. With a `limit`, one that
// has not ended by then is killed (false): the supervisor waits on it, and its deadlines with it.
bool run_quietly(Argv argv, std::optional<std::chrono::milliseconds> limit = std::nullopt) {
  static char* const envp[] = {const_cast<char*>("PATH=/usr/sbin:/usr/bin:/sbin:/bin"), nullptr};
  const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  char* const* args = argv.data();
  const RunscExec exec{
      .path = args[0], .argv = args, .envp = envp, .stdio = {devnull, devnull, devnull}};
  const pid_t pid = ::fork();
  if (pid == 0) exec_runsc(exec);
  ::close(devnull);
  if (pid < 0) return false;
  int waited = 1;  // without a limit (or a pidfd), waitpid below waits as long as it takes
  if (limit) {
    const UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    pollfd ended{pidfd.get(), POLLIN, 0};
    if (pidfd.valid()) waited = ::poll(&ended, 1, static_cast<int>(limit->count()));
    if (waited == 0) {
      jail::log().warn("runsc {} did not end within {} ms; killed", argv.words[3], limit->count());
      ::kill(pid, SIGKILL);
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return waited != 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string random_id() {
  std::random_device device;
  return fmt::format("jail-{}-{:08x}{:08x}", ::getpid(), device(), device());
}

// Waits, up to `patience`, until the keeper has started runsc (its first report, or the report
// socket's end if it failed first). The keeper and runsc's process before its exec are the
// start's critical path; this thread's next work (the policy, the bundle: ~4 ms) is not, as
// runsc reads the bundle only ~26 ms after its exec. Done first, that work took the CPU the
// scheduler had started the keeper on — and a socket's wake-up brings the waiting thread to the
// waker's CPU — while the other CPU idled: traced, the keeper stood runnable for ~4 ms. Only an
// order of work, so bounded.
void wait_until_runsc_started(ReportChannel& reports, std::chrono::milliseconds patience) {
  const auto give_up = std::chrono::steady_clock::now() + patience;
  while (reports.open() && reports.reports().empty()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        give_up - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    pollfd report{reports.fd(), POLLIN, 0};
    const int ready = ::poll(&report, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return;
    reports.drain();
  }
}

}  // namespace

RunscSandbox::RunscSandbox(std::string runsc, TempDir dir, std::string id)
    : runsc_(std::move(runsc)),
      dir_(std::move(dir)),
      id_(std::move(id)),
      gate_(dir_.path() / "runsc-error.log") {
  dir_lock_ = lock_runsc_run_dir(dir_.path());
}

RunscSandbox::~RunscSandbox() {
  // `runsc run` that ends by itself destroys its container and leaves the state root empty; a
  // run that was killed, or never started, leaves state behind and maybe a sandbox: only then
  // is `delete --force` needed (another runsc process: ~45 ms of every start-up measured here).
  std::error_code error;
  if (!gone_ && (!std::filesystem::is_empty(state_root(), error) || error)) {
    run_quietly(Argv{{runsc_, "--root", state_root(), "delete", "--force", id_}});
  }
}

bool RunscSandbox::signal_container(int signal) const {
  // `runsc kill` takes tens of ms; a hung one must not hold back the timeout's SIGKILL.
  return run_quietly(Argv{{runsc_, "--root", state_root(), "kill", id_, std::to_string(signal)}},
                     std::chrono::seconds(5));
}

std::string RunscSandbox::bundle() const {
  return (dir_.path() / "bundle").string();
}
std::string RunscSandbox::state_root() const {
  return (dir_.path() / "state").string();
}

std::string find_runsc() {
  for (const char* dir : {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin"}) {
    const std::string path = std::string(dir) + "/runsc";
    if (::access(path.c_str(), X_OK) == 0) return path;
  }
  throw Error("runsc", ENOENT,
              "--runtime runsc: runsc (gVisor) is not installed; install the Debian package "
              "`runsc` (apt-get install runsc), or run without --runtime");
}

Process launch_runsc(const Spec& spec) {
  Timeline timeline(spec.trace_timing);
  timeline.mark(child::Phase::launch);
  check_spec(spec);
  occupy_closed_stdio();  // before this run opens anything that could take their numbers
  if (::geteuid() != 0) {
    throw Error("runsc", EPERM,
                "--runtime runsc needs root here: runsc's sandbox sets up its own namespaces and "
                "cgroups; run jail as root, or use the native runtime");
  }
  const std::string runsc = find_runsc();
  timeline.mark(child::Phase::spec_checked);
  auto state = std::make_unique<Process::State>();
  state->isolation = "gvisor";
  const std::filesystem::path parent = oci::run_bundle_parent();
  state->runsc =
      std::make_unique<RunscSandbox>(runsc, TempDir(runsc_run_dir_prefix(), parent), random_id());
  RunscSandbox& sandbox = *state->runsc;
  std::filesystem::create_directories(sandbox.state_root());
  const bool with_policy = spec.policy != kNoPolicy;

  // Before the clone: runsc must be inside the limits from its first instruction.
  state->cgroup = make_cgroup(spec);
  timeline.mark(child::Phase::cgroup_created);
  // Planned before the clone, written while runsc starts: runsc's process binds the read-only
  // binds into the rootfs itself (oci/host_side_binds.hpp), from this plan.
  oci::RunBundle bundle(spec, sandbox.bundle());
  state->context.ops = bundle.descriptions();

  // gVisor's own threads count against the jail's pids and memory limits: give it headroom
  // (see the README). jail owns the cgroup; runsc is told to leave cgroups alone. runsc waits at
  // its start gate (runsc/start_gate.hpp) until the bundle it is pointed at is complete.
  Argv argv{{runsc, "--root", sandbox.state_root(), "--platform",
             spec.runsc_platform.empty() ? "ptrace" : spec.runsc_platform, "--network",
             spec.net == Net::host ? "host" : "none", "--ignore-cgroups",
             sandbox.gate().argument()}};
  // The sentry's log goes to a pipe the supervisor reads (runsc/denial_log.hpp): at info level
  // it says how the tool ended (runsc run's own exit cannot tell exit(130) from SIGINT), and at
  // debug level — with a policy, which gVisor applies itself — it is the only record of a denied
  // call. Only the sentry (runsc's "boot") logs either; runsc run's and the gofer's logs (~35 KiB
  // at each start with --debug) would only be read and thrown away.
  Pipe debug_log = make_pipe("runsc's debug log pipe");
  // Room for a start-up's log (a Python start logs ~450 KiB at debug level), so that a caller
  // who talks to the tool before waiting does not stall gVisor on a full pipe. Best effort.
  (void)::fcntl(debug_log.read.get(), F_SETPIPE_SZ, 1 << 20);
  (void)::fcntl(debug_log.read.get(), F_SETFL, O_NONBLOCK);
  // --oci-seccomp: for a bundle that hands runsc the policy as a profile (the bundle is written
  // after this); one whose tool jail's policy loader starts has none, and runsc applies none.
  if (with_policy) {
    for (const char* word : {"--oci-seccomp", "--debug"}) argv.words.emplace_back(word);
  }
  for (const char* word : {"--debug-command=boot", kDebugLogArgument})
    argv.words.emplace_back(word);
  for (const char* word : {"run", "--bundle"}) argv.words.emplace_back(word);
  argv.words.push_back(sandbox.bundle());
  argv.words.push_back(sandbox.id());
  static char* const envp[] = {const_cast<char*>("PATH=/usr/sbin:/usr/bin:/sbin:/bin"), nullptr};

  // The same stdio as a native run: runsc's own stdio is the tool's.
  const std::array<UniqueFd, 3> child_stdio = plumb_stdio(spec, *state);
  char* const* args = argv.data();

  // v1: runsc joins by itself (exec_runsc); v2: clone_into places it. The keeper (below) stays
  // out: it is jail's, and the cgroup's kill must not end it before it has reaped runsc.
  const std::vector<UniqueFd> cgroup_tasks = state->cgroup.open_v1_tasks();
  std::vector<int> cgroup_task_fds;
  for (const UniqueFd& fd : cgroup_tasks) cgroup_task_fds.push_back(fd.get());
  Pipe report = make_report_socket();
  const RunscExec exec{.path = args[0],
                       .argv = args,
                       .envp = envp,
                       .stdio = {child_stdio[0].get(), child_stdio[1].get(), child_stdio[2].get()},
                       .debug_log = debug_log.write.get(),
                       .report_fd = report.write.get(),
                       .cgroup_tasks = cgroup_task_fds,
                       .host_binds = bundle.host_binds()};
  clone_args runsc_clone{};
  runsc_clone.exit_signal = SIGCHLD;
  clone_into(runsc_clone, state->cgroup);

  // jail's child is runsc's keeper (runsc/keeper.hpp), which starts runsc and reaps what it
  // leaves; the supervisor watches the keeper as it would runsc, and sees runsc's end in its own.
  clone_args clone{};
  int pidfd = -1;
  clone.flags = CLONE_PIDFD;
  clone.pidfd = reinterpret_cast<std::uint64_t>(&pidfd);
  // No SIGCHLD: a host that reaps its children with waitpid(-1) (a SIGCHLD handler, a child
  // watcher) or ignores SIGCHLD would take this one's status from the supervisor; it is waited
  // for through its pidfd and with __WALL only.
  clone.exit_signal = 0;
  // The keeper's lifeline (keep_runsc): the write end stays here for the run's whole life.
  Pipe lifeline = make_pipe("the runsc keeper's lifeline pipe");
  child::learn_caller_heap_start();
  state->started = std::chrono::steady_clock::now();
  // Cloned with every signal blocked, which the keeper keeps until it has set its own handlers:
  // it is a copy of the caller, whose handlers must not run in it.
  sigset_t all, before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  const long pid = ::syscall(SYS_clone3, &clone, sizeof clone);
  if (pid == 0) keep_runsc(runsc_clone, exec, lifeline.read.get());
  const int clone_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (pid < 0) {
    throw Error("clone", clone_errno,
                fmt::format("cannot start runsc: {}", std::strerror(clone_errno)));
  }
  state->pid = static_cast<pid_t>(pid);
  state->pidfd.reset(pidfd);
  state->go_write = std::move(lifeline.write);
  lifeline.read.reset();
  // The keeper's and runsc's copies are then the only ones: the end of the file once runsc runs.
  report.write.reset();
  state->reports = ReportChannel(std::move(report.read));
  timeline.mark(child::Phase::cloned);
  wait_until_runsc_started(state->reports, std::chrono::milliseconds(100));
  try {
    // While runsc initialises: the policy and the bundle. A policy that does not compile, or a
    // bundle that cannot be written, ends runsc before it has read anything.
    // The policy compiled as a native run compiles it, but with direct actions: jail's loader
    // loads it inside the sandbox when the bundle can start the command that way
    // (runsc/policy_loader.hpp); else runsc gets it as an OCI profile.
    const std::unique_ptr<PreparedPolicy> prepared =
        prepare_policy(spec.policy, policy::Routing::direct);
    if (prepared && !loadable_in_gvisor(prepared->program)) {
      // Either way it would not run as written: loaded as a filter, gVisor kills a `log`ged
      // call; as a profile, runsc refuses SCMP_ACT_LOG.
      throw Error("policy", ENOTSUP,
                  fmt::format("policy {} has a `log` rule, which this runsc (gVisor) cannot "
                              "apply: it would kill the call; use allow or errno there, or the "
                              "native runtime",
                              spec.policy));
    }
    if (prepared) refuse_if_gvisor_cannot_hold(*prepared->policy, spec.policy);
    // Made only for a bundle that hands runsc the profile; one that would carry no policy at
    // all is refused by write_bundle.
    const auto profile = [&]() -> nlohmann::json {
      return prepared ? oci_profile_of(*prepared->policy, spec.policy, OciReader::runsc)
                      : nlohmann::json();
    };
    const oci::BundleFacts facts = bundle.write(
        spec, {.profile = profile, .program = prepared ? &prepared->program : nullptr});
    sandbox.set_command_found(facts.command_found);
    if (prepared) {
      state->policy = prepared->policy;
      jail::log().debug("policy {}: {}", spec.policy,
                        facts.policy_in_sandbox
                            ? "loaded inside the sandbox by jail's policy loader"
                            : "handed to runsc as an OCI profile (--oci-seccomp)");
    }
    timeline.mark(child::Phase::bundle_written);
    sandbox.gate().open();
    timeline.mark(child::Phase::runsc_released);
    // Off the critical path too: runsc has its bundle, and the sweep skips our own (locked).
    remove_stale_runsc_run_dirs(parent);
  } catch (...) {
    end_and_reap(*state);
    throw;
  }
  state->runsc_debug_log = std::move(debug_log.read);
  state->timeline = std::move(timeline);
  state->limits = spec.limits;
  state->forward_signals = spec.forward_signals;
  state->context.command = spec.argv.front();
  state->context.runsc = runsc;
  if (std::optional<std::string> path = environment_value(spec.env, "PATH"))
    state->context.path = std::move(*path);
  jail::log().debug("runsc sandbox {} (bundle {}), runsc pid {}", sandbox.id(), sandbox.bundle(),
                    state->pid);
  return Process(std::move(state));
}

}  // namespace jail
