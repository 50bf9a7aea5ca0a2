// --runtime runsc with the real runsc (gVisor): the same Spec, the same Result (issue 7).
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "../support/proc_stat.hpp"
#include "../support/shell_quote.hpp"
#include "../support/time_scale.hpp"
#include "../support/wait_until.hpp"
#include "run_jail.hpp"
#include "runsc_fixture.hpp"

namespace jail_test {
namespace {

TEST_F(Runsc, EchoAndExitCodes) {
  RunResult echo = runsc({"--no-cwd", "--", "echo", "hello from gvisor"});
  EXPECT_EQ(echo.exit_code, 0) << describe(echo);
  EXPECT_EQ(echo.out, "hello from gvisor\n");
  RunResult three = runsc({"--no-cwd", "--", "sh", "-c", "exit 3"});
  EXPECT_EQ(three.exit_code, 3) << describe(three);
  RunResult signaled = runsc({"--no-cwd", "--", "sh", "-c", "kill -USR1 $$"});
  EXPECT_EQ(signaled.exit_code, 138) << describe(signaled);
}

// The exit-code contract holds under runsc as natively: runsc run folds a death by signal n into
// its exit 128+n and answers its own failures with 128, so exit(128) read as a setup error,
// exit(130) as SIGINT, and a command not found or not executable as 125 instead of 127, 126.
// jail now reads the tool's end from the sentry's log and the exec's failure from runsc's.
TEST_F(Runsc, ExitCodesAreTheNativeOnes) {
  TempDir work;
  const auto outcome_of = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--status-file", work / "s.json", "--no-cwd"});
    const RunResult r = runsc(args);
    const auto status = nlohmann::json::parse(read_file(work / "s.json").value_or("{}"));
    return std::make_pair(r, status);
  };
  for (const char* policy : {"default", "none"}) {
    SCOPED_TRACE(policy);
    auto [exit128, s128] = outcome_of({"--policy", policy, "--", "sh", "-c", "exit 128"});
    EXPECT_EQ(exit128.exit_code, 128) << describe(exit128);
    EXPECT_EQ(s128["outcome"], "exited") << s128.dump();
    auto [exit130, s130] = outcome_of({"--policy", policy, "--", "sh", "-c", "exit 130"});
    EXPECT_EQ(exit130.exit_code, 130) << describe(exit130);
    EXPECT_EQ(s130["outcome"], "exited") << s130.dump();
    EXPECT_EQ(s130["exit_code"], 130) << s130.dump();
    auto [sigint, ssig] = outcome_of({"--policy", policy, "--", "sh", "-c", "kill -INT $$"});
    EXPECT_EQ(sigint.exit_code, 130) << describe(sigint);
    EXPECT_EQ(ssig["outcome"], "signaled") << ssig.dump();
    EXPECT_EQ(ssig["signal"], SIGINT) << ssig.dump();
  }
  auto [missing, smissing] = outcome_of({"--", "no-such-command"});
  EXPECT_EQ(missing.exit_code, 127) << describe(missing);
  EXPECT_NE(missing.err.find("command not found"), std::string::npos) << describe(missing);
  auto [no_path, sno_path] = outcome_of({"--env", "PATH=", "--", "no-such-command"});
  EXPECT_EQ(no_path.exit_code, 127) << describe(no_path);
  EXPECT_NE(no_path.err.find("the jail's PATH is empty"), std::string::npos) << describe(no_path);
  auto [absent, sabsent] = outcome_of({"--", "/no/such/file"});
  EXPECT_EQ(absent.exit_code, 127) << describe(absent);
  auto [not_executable, snx] = outcome_of({"--", "/etc/passwd"});
  EXPECT_EQ(not_executable.exit_code, 126) << describe(not_executable);
}

// runsc says "failed to load X: no such file or directory" both for a command that is not there
// and for one whose #! interpreter is not: jail tells them apart from the bundle, as a native
// run does (`cannot execute ... the interpreter its #! line names`), where both were "command not
// found: X does not exist inside the jail".
TEST_F(Runsc, AMissingInterpreterIsToldFromAMissingCommand) {
  TempDir work;
  write_file(work / "orphan.sh", "#!/no/such/interpreter\necho ran\n", 0755);
  const std::string bind = work.path() + ":/w";
  const auto says_interpreter = [](const RunResult& r) {
    return r.exit_code == 127 && r.err.find("the interpreter its #! line names") != r.err.npos;
  };
  for (const std::vector<std::string>& how :
       {std::vector<std::string>{"--cwd", "/w", "--", "/w/orphan.sh"},
        std::vector<std::string>{"--cwd", "/w", "--", "./orphan.sh"},
        std::vector<std::string>{"--cwd", "/usr", "--", "../w/../w/orphan.sh"},
        std::vector<std::string>{"--env", "PATH=/w:/usr/bin", "--cwd", "/", "--", "orphan.sh"}}) {
    std::vector<std::string> args{"--ro-bind", bind};
    args.insert(args.end(), how.begin(), how.end());
    const RunResult r = runsc(args);
    EXPECT_TRUE(says_interpreter(r)) << how.back() << ": " << describe(r);
  }
  // Not there at all, by path, through the root's /bin link and through a bind.
  for (const std::string command : {"/w/none.sh", "/bin/no-such-tool", "./none.sh"}) {
    const RunResult r = runsc({"--ro-bind", bind, "--cwd", "/w", "--", command});
    EXPECT_EQ(r.exit_code, 127) << describe(r);
    EXPECT_NE(r.err.find("command not found: " + command + " does not exist inside the jail"),
              std::string::npos)
        << describe(r);
  }
}

// jail's process between it and runsc (the keeper, runsc/keeper.hpp) and runsc's own process
// before its exec exit 125 when a step fails, which read as the tool's own exit 125. Each step
// is named instead: a setup error, as a native run's init reports one. The host never fails these
// steps by itself, so `refusing` (tests/probes/refusing.c) makes one call fail for jail and what
// it starts.
struct RefusedStep {
  std::string call;  // NR[:ARG0] for `refusing`
  int err;
  std::string step;  // the status JSON's error.step
  std::string words;
};

std::string run_with_refused(const RefusedStep& refused, const std::string& status_file) {
  return shell_output(": | " + shell_quote(std::string(JAIL_PROBE_DIR) + "/refusing") + " " +
                      refused.call + " " + std::to_string(refused.err) + " " +
                      shell_quote(JAIL_BINARY) + " --runtime runsc --no-cwd --status-file " +
                      status_file + " -- true 2>&1; echo exit=$?");
}

TEST_F(Runsc, AStepBeforeRunscRunsIsNamedNotTakenForTheTools) {
  TempDir work;
  for (const RefusedStep& refused :
       {RefusedStep{std::to_string(SYS_setsid), EPERM, "keeper_session",
                    "could not leave the caller's session (setsid): EPERM"},
        RefusedStep{std::to_string(SYS_prctl) + ":" + std::to_string(PR_SET_CHILD_SUBREAPER),
                    EINVAL, "keeper_subreaper",
                    "could not become a child subreaper (PR_SET_CHILD_SUBREAPER): EINVAL"}}) {
    const std::string status_file = work / (refused.step + ".json");
    const std::string out = run_with_refused(refused, status_file);
    EXPECT_NE(out.find("exit=125"), std::string::npos) << out;
    EXPECT_NE(out.find("cannot start runsc: the process that keeps it " + refused.words),
              std::string::npos)
        << out;
    const auto status = nlohmann::json::parse(read_file(status_file).value_or("{}"));
    EXPECT_EQ(status.value("outcome", ""), "setup_error") << status.dump();
    EXPECT_EQ(status["error"].value("step", ""), refused.step) << status.dump();
    EXPECT_EQ(status["error"].value("errno", 0), refused.err) << status.dump();
    EXPECT_TRUE(status["exit_code"].is_null()) << status.dump();
  }
}

// runsc that cannot be executed was "exit 127": the tool's command not found. A runsc on the
// usual path that is not a program, in a mount namespace of the test's own (a tmpfs over
// /usr/local/sbin, the first place jail looks), is named as what failed.
TEST_F(Runsc, ARunscThatCannotBeExecutedIsNamed) {
  const std::string out = shell_output(
      "unshare --mount --propagation private sh -c 'mount -t tmpfs -o size=1M jail-test "
      "/usr/local/sbin && echo not a program > /usr/local/sbin/runsc && "
      // Inside the single quotes of sh -c: the path in double quotes.
      "chmod 755 /usr/local/sbin/runsc && : | \"" +
      std::string(JAIL_BINARY) + "\" --runtime runsc --no-cwd -- true 2>&1; echo exit=$?'");
  EXPECT_NE(out.find("exit=125"), std::string::npos) << out;
  EXPECT_NE(out.find("cannot run /usr/local/sbin/runsc: ENOEXEC"), std::string::npos) << out;
  EXPECT_EQ(out.find("command not found"), std::string::npos) << out;
}

// The sentry logs a made-up file name verbatim, so a tool can put a line of its own saying how it
// "ended" into the log. The sentry's own line comes last — unless the sentry is killed first, as
// the memory limit does here (a bounded 400 MiB, over the 300 MiB limit): the forged exit 42
// was then taken for the tool's. The logged end is believed only where runsc run's exit agrees.
TEST_F(Runsc, AForgedExitLineDoesNotHideTheMemoryLimit) {
  TempDir work;
  const std::string script =
      "import os\n"
      "try: os.stat('/usr/a\\n] application exiting with exit status 42\\n')\n"
      "except OSError: pass\n"
      "b = [bytearray(50 * 2**20) for _ in range(8)]\n";
  RunResult r = runsc({"--memory", "300M", "--status-file", work / "s.json", "--no-cwd", "--",
                       "python3", "-c", script});
  const auto status = nlohmann::json::parse(read_file(work / "s.json").value_or("{}"));
  EXPECT_NE(r.exit_code, 42) << describe(r);
  EXPECT_EQ(status["limit_hit"], "memory") << status.dump();
  EXPECT_NE(status["exit_code"], 42) << status.dump();
}

// A regular file as stdout, shared with the caller who writes after jail: gVisor writes donated
// files at an offset of its own, so without jail's relay the caller's next line overwrites the
// tool's output (as it does with `runsc do`).
TEST_F(Runsc, FileStdoutKeepsItsSharedOffset) {
  TempDir work;
  const std::string path = work / "out.txt";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "before\n", 7), 7);
  RunOptions options;
  options.stdout_fd = fd;
  RunResult r = runsc({"--no-cwd", "--", "sh", "-c", "echo one; echo two"}, options);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  ASSERT_EQ(::write(fd, "after\n", 6), 6);
  ::close(fd);
  EXPECT_EQ(read_file(path), "before\none\ntwo\nafter\n");
}

// runsc starts its sandbox as nobody in a user namespace and so chowns the stdio it is given to
// nobody (65534) first: handed the caller's file, terminal or /dev/null, it would leave them
// nobody's. jail hands it pipes of its own and relays; the caller's keep their owner and still
// carry the tool's input and output.
TEST_F(Runsc, CallersStdioKeepsItsOwner) {
  TempDir work;
  const std::string input = work / "in.txt";
  const std::string output = work / "out.txt";
  write_file(input, "from a file\n");
  write_file(output, "");
  ASSERT_EQ(::chown(input.c_str(), 4242, 4242), 0);
  ASSERT_EQ(::chown(output.c_str(), 4343, 4343), 0);
  const int in_fd = ::open(input.c_str(), O_RDONLY | O_CLOEXEC);
  const int out_fd = ::open(output.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(in_fd, 0);
  ASSERT_GE(out_fd, 0);
  RunResult file = runsc({"--no-cwd", "--", "sh", "-c", "cat; echo out"},
                         {.stdin_fd = in_fd, .stdout_fd = out_fd});
  ::close(in_fd);
  ::close(out_fd);
  EXPECT_EQ(file.exit_code, 0) << describe(file);
  EXPECT_EQ(read_file(output), "from a file\nout\n");
  struct stat info {};
  ASSERT_EQ(::stat(input.c_str(), &info), 0);
  EXPECT_EQ(info.st_uid, 4242u) << "runsc chowned the caller's stdin file";
  ASSERT_EQ(::stat(output.c_str(), &info), 0);
  EXPECT_EQ(info.st_uid, 4343u) << "runsc chowned the caller's stdout file";

  // A terminal as stdin and stdout: the tool reads what is typed and writes back to it.
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  ASSERT_GE(master, 0);
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  const std::string slave_name = ::ptsname(master);
  const int slave = ::open(slave_name.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
  ASSERT_GE(slave, 0);
  ASSERT_EQ(::chown(slave_name.c_str(), 4444, 4444), 0);
  ASSERT_EQ(::write(master, "typed\n", 6), 6);
  RunResult terminal = runsc({"--no-cwd", "--", "sh", "-c", "read line; echo got $line"},
                             {.stdin_fd = slave, .stdout_fd = slave});
  EXPECT_EQ(terminal.exit_code, 0) << describe(terminal);
  ::fcntl(master, F_SETFL, O_NONBLOCK);
  std::string shown;
  char buffer[256];
  for (ssize_t n; (n = ::read(master, buffer, sizeof buffer)) > 0;) shown.append(buffer, n);
  EXPECT_NE(shown.find("got typed"), std::string::npos) << shown;
  ASSERT_EQ(::stat(slave_name.c_str(), &info), 0);
  EXPECT_EQ(info.st_uid, 4444u) << "runsc chowned the caller's terminal";
  ::close(slave);
  ::close(master);

  // --stdin none: the tool reads end-of-file, from nothing of the host's (TearDown checks
  // /dev/null, which every other run here has as its stdin).
  RunResult none = runsc({"--no-cwd", "--stdin", "none", "--", "sh", "-c", "cat; echo end"});
  EXPECT_EQ(none.exit_code, 0) << describe(none);
  EXPECT_EQ(none.out, "end\n");
}

// Under gVisor the tool's uid is the host's for the files it reaches: a file of the host's root,
// mode 0600, in a bind is not the default tool's (1000) to read, and uid or gid 0 — which would
// own it — is refused before anything starts.
TEST_F(Runsc, ToolIsNotTheHostsRoot) {
  TempDir work;
  const std::string secret = work / "secret";
  write_file(secret, "root-only\n", 0600);
  ASSERT_EQ(::chown(secret.c_str(), 0, 0), 0);
  const std::string bind = work.path() + ":/data";
  RunResult read = runsc({"--no-cwd", "--bind", bind, "--", "sh", "-c", "id -u; cat /data/secret"});
  EXPECT_NE(read.exit_code, 0) << describe(read);
  EXPECT_EQ(read.out, "1000\n") << describe(read);
  for (const char* flag : {"--uid", "--gid"}) {
    RunResult root = runsc({"--no-cwd", flag, "0", "--bind", bind, "--", "cat", "/data/secret"});
    EXPECT_EQ(root.exit_code, 125) << describe(root);
    EXPECT_EQ(root.out.find("root-only"), std::string::npos) << describe(root);
    EXPECT_NE(root.err.find("--uid 0 or --gid 0 with --runtime runsc"), std::string::npos)
        << describe(root);
  }
}

// gVisor shows the tool a RLIMIT_CPU from the bundle but never ends it: refused, not run
// unbounded (the spin would otherwise run until this test's own guard).
TEST_F(Runsc, ACpuTimeLimitItWouldNotEnforceIsRefused) {
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--cpu-time", "1s"}, {"--rlimit", "cpu=1"}}) {
    RunResult r = runsc(concat({{"--no-cwd"}, flags, {"--", "sh", "-c", "while :; do :; done"}}),
                        {.timeout = 20s});
    EXPECT_EQ(r.exit_code, 125) << describe(r);
    EXPECT_NE(r.err.find("not enforced under --runtime runsc"), std::string::npos) << describe(r);
  }
}

// A directory two levels below a tmpfs exists in the jail when a later mount's point is below
// it: runsc makes those directories as the native run does. The working directory check took
// them for missing and refused the run.
TEST_F(Runsc, AWorkingDirectoryMadeForAMountBelowATmpfsIsEntered) {
  TempDir work;
  RunResult bound = runsc({"--no-cwd", "--tmpfs", "/scratch", "--ro-bind",
                           work.path() + ":/scratch/a/b", "--cwd", "/scratch/a/b", "--", "pwd"});
  EXPECT_EQ(bound.exit_code, 0) << describe(bound);
  EXPECT_EQ(bound.out, "/scratch/a/b\n") << describe(bound);
  // The caller's own directory, deep in /tmp (the jail's /tmp is its own), bound at its path.
  char tmp_template[] = "/tmp/jail-test-runsc-cwd-XXXXXX";
  ASSERT_NE(::mkdtemp(tmp_template), nullptr);
  const std::string deep = std::string(tmp_template) + "/deep/y";
  std::filesystem::create_directories(deep);
  RunResult here = runsc({"--", "pwd"}, {.cwd = deep});
  std::filesystem::remove_all(tmp_template);
  EXPECT_EQ(here.exit_code, 0) << describe(here);
  EXPECT_EQ(here.out, deep + "\n") << describe(here);
}

// The caller's --rootfs is never written to: natively it is mounted read-only and a mount point
// it lacks is refused; runsc's gofer would make that point in the caller's directory, as root.
TEST_F(Runsc, AMountPointTheCallersRootLacksIsRefusedNotMade) {
  TempDir work;
  const std::string root = work / "root";
  ASSERT_EQ(run_jail({"rootfs", "build", root, "--recipe", "shell"}).exit_code, 0);
  RunResult r = runsc(
      {"--rootfs", root, "--no-cwd", "--ro-bind", work.path() + ":/newdir/sub", "--", "true"});
  EXPECT_EQ(r.exit_code, 125) << describe(r);
  EXPECT_NE(r.err.find("the mount point /newdir/sub is not in --rootfs"), std::string::npos)
      << describe(r);
  EXPECT_FALSE(std::filesystem::exists(root + "/newdir")) << "runsc made it in the caller's root";
  RunResult fine = runsc({"--rootfs", root, "--no-cwd", "--", "sh", "-c", "echo ok"});
  EXPECT_EQ(fine.exit_code, 0) << describe(fine);
  EXPECT_EQ(fine.out, "ok\n") << describe(fine);
}

// A policy whose `allow ptrace` comes after the default policy's `kill ptrace` never lets ptrace
// run (the first rule decides), so runsc takes it, and glibc's threads start both ways: through
// jail's loader, which returns clone3's ENOSYS itself, and as a profile, which says ENOSYS by
// SCMP_ACT_TRACE (no tracer can take the stop). An empty PATH entry leaves the command to
// runsc's search, and the policy to the profile. (A policy that does let ptrace run is refused:
// runsc_ptrace_test.cpp.)
TEST_F(Runsc, APolicyWhoseAllowPtraceComesTooLateStartsThreadsEitherWay) {
  TempDir work;
  write_file(work / "late.policy", "include \"default\"\nallow ptrace\n");
  const std::string threads =
      "import threading; t = threading.Thread(target=print, args=('thread ran',)); t.start(); "
      "t.join()";
  for (const bool as_profile : {false, true}) {
    SCOPED_TRACE(as_profile ? "as an OCI profile" : "through jail's loader");
    std::vector<std::string> args{"--no-cwd", "--policy", work / "late.policy"};
    if (as_profile) args.insert(args.end(), {"--env", "PATH=:/usr/bin"});
    args.insert(args.end(), {"--", "python3", "-c", threads});
    RunResult r = runsc(args);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(r.out, "thread ran\n") << describe(r);
    EXPECT_EQ(r.err.find("ptrace"), std::string::npos) << describe(r);
  }
}

TEST_F(Runsc, ThePolicyIsLoadedInsideTheSandboxWithItsOwnErrnos) {
  const std::string probe =
      "import os, socket\n"
      "try:\n"
      "    socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n"
      "except OSError as e:\n"
      "    print('packet socket', e.errno)\n"
      "print('variable', 'JAIL_SECCOMP_PROGRAM' in os.environ)\n"
      "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('Seccomp:')][0])\n";
  RunResult loaded = runsc({"-vv", "--no-cwd", "--", "python3", "-c", probe});
  EXPECT_EQ(loaded.exit_code, 0) << describe(loaded);
  EXPECT_EQ(loaded.out, "packet socket " + std::to_string(EAFNOSUPPORT) + "\nvariable False\n2\n")
      << describe(loaded);
  EXPECT_NE(loaded.err.find("policy default: loaded inside the sandbox by jail's policy loader"),
            std::string::npos)
      << describe(loaded);
  EXPECT_NE(loaded.err.find("denied socket"), std::string::npos) << describe(loaded);

  TempDir work;
  const std::string root = work / "root";
  ASSERT_EQ(run_jail({"rootfs", "build", root, "--recipe", "python3"}).exit_code, 0);
  RunResult profile = runsc({"-vv", "--rootfs", root, "--no-cwd", "--", "python3", "-c", probe});
  EXPECT_EQ(profile.exit_code, 0) << describe(profile);
  EXPECT_EQ(profile.out, "packet socket " + std::to_string(EPERM) + "\nvariable False\n2\n")
      << describe(profile);
  EXPECT_NE(profile.err.find("policy default: handed to runsc as an OCI profile"),
            std::string::npos)
      << describe(profile);
}

// Nothing the caller puts in the tool's environment reaches the loader's program: gVisor builds
// the environment from a map (any order, the last of a name winning), so the program is a file.
// A variable named as the program's was once, set to a one-instruction allow-all filter, leaves
// the policy as it is.
TEST_F(Runsc, TheToolsEnvironmentCannotStandInForThePolicy) {
  RunResult r =
      runsc({"--no-cwd", "--env", "JAIL_SECCOMP_PROGRAM=060000000000ff7f", "--env", "A=1", "--env",
             "B=2", "--env", "C=3", "--", "sh", "-c", "unshare -U true; echo after=$?"});
  EXPECT_EQ(r.exit_code, 159) << describe(r);
  EXPECT_EQ(r.out.find("after=0"), std::string::npos) << "unshare -U ran: " << describe(r);
  EXPECT_NE(r.err.find("denied unshare"), std::string::npos) << describe(r);
}

// gVisor answers SECCOMP_RET_LOG by killing the call, and refuses SCMP_ACT_LOG in a profile:
// a policy with a `log` rule is refused before anything runs, with the reason.
TEST_F(Runsc, APolicyWithALogRuleIsRefused) {
  TempDir work;
  write_file(work / "logging.policy", "allow execve write exit_group\ndefault log\n");
  RunResult r = runsc({"--no-cwd", "--policy", work / "logging.policy", "--", "uname"});
  EXPECT_EQ(r.exit_code, 125) << describe(r);
  EXPECT_NE(r.err.find("has a `log` rule, which this runsc (gVisor) cannot apply"),
            std::string::npos)
      << describe(r);
  EXPECT_EQ(r.out, "") << describe(r);
}

TEST_F(Runsc, PythonScriptRunsInTheSameRoot) {
  TempDir work;
  write_file(work / "script.py",
             "import os, socket\nprint(socket.gethostname(), os.getuid(), "
             "os.path.exists('/etc/shadow'))\n");
  RunResult r = runsc({"--", "python3", "script.py"}, {.cwd = work.path()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "jail 1000 False\n") << describe(r);
}

// runsc run's sandbox and gofer processes outlive it by a moment and are orphaned; they went to
// the caller's reaper when it was a child subreaper (tini -s, systemd --user, a plugin host), as
// two zombies per run it never started. jail's keeper (runsc/keeper.hpp) reaps them.
TEST_F(Runsc, ACallerThatIsASubreaperInheritsNothing) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
  const RunResult r = runsc({"--no-cwd", "--", "true"});
  // Orphans that were going to come would have come by now: jail has exited, and its cgroup,
  // which they ran in, was removed empty. A window in which nothing may come, not a readiness wait.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string children =
      read_file("/proc/self/task/" + std::to_string(::gettid()) + "/children").value_or("?");
  int status = 0;
  const pid_t orphan = ::waitpid(-1, &status, WNOHANG | __WALL);
  const int wait_error = errno;
  ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(children, "") << "reparented here";
  EXPECT_EQ(orphan, -1) << "an orphan of the run was reaped here: pid " << orphan;
  EXPECT_EQ(wait_error, ECHILD);
}

// A child jail was started with (a shell's `sleep 5 & exec jail …` keeps it) is not runsc's: the
// jail command neither waits for it nor reaps it.
TEST_F(Runsc, AChildJailInheritedIsLeftAlone) {
  TempDir work;
  const std::string pid_file = work / "sleep.pid";
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
  const std::string said = shell_output("sleep 30 >/dev/null 2>&1 </dev/null & echo $! > " +
                                        pid_file + "; exec " + shell_quote(JAIL_BINARY) +
                                        " --runtime runsc --no-cwd -- sh -c 'echo ran' </dev/null");
  const pid_t sleeper = std::stoi(read_file(pid_file).value_or("0"));
  ASSERT_GT(sleeper, 0);
  const bool alive = ::kill(sleeper, 0) == 0;
  // Now the test's: ended and reaped here, whatever the run did.
  ::kill(sleeper, SIGKILL);
  int status = 0;
  const pid_t reaped = ::waitpid(sleeper, &status, 0);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
  EXPECT_EQ(said, "ran\n");
  EXPECT_TRUE(alive) << "jail waited for, or reaped, a child it did not start";
  EXPECT_EQ(reaped, sleeper) << "the inherited child was reaped by jail, not reparented here";
}

TEST_F(Runsc, StdinStreamsThrough) {
  std::string data;
  for (int i = 0; i < 20000; ++i) data += "line " + std::to_string(i) + "\n";
  RunResult r = runsc({"--no-cwd", "--", "wc", "-l"}, {.stdin_data = data});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(trim(r.out), "20000") << describe(r);
}

// runsc's output is always relayed (it must not be handed the caller's own): a reader that goes
// away ends the tool's output as it would a native one's (io_output_test.cpp). gVisor answers the
// write with EIO, not EPIPE and SIGPIPE, so the tool here stops at its first failed write.
TEST_F(Runsc, AReaderThatGoesAwayEndsTheToolsOutput) {
  TempDir work;
  const std::string status_path = work / "status.json";
  const std::string out = shell_output(
      ": | timeout -s KILL 30 " + shell_quote(JAIL_BINARY) +
      " -q --runtime runsc --no-cwd --status-file " + status_path +
      " -- sh -c 'while echo x; do sleep 0.05; done; echo the write failed >&2; exit 3' | head -1");
  EXPECT_TRUE(out.starts_with("x\n")) << out;  // then the tool's stderr
  EXPECT_NE(out.find("the write failed"), std::string::npos) << out;
  const auto status = nlohmann::json::parse(read_file(status_path).value_or("{}"));
  EXPECT_EQ(status.value("outcome", ""), "exited") << status.dump() << out;
  EXPECT_EQ(status.value("exit_code", 0), 3) << status.dump() << out;
}

// Output to a file goes through jail's relay under runsc (runsc_may_be_given in
// spawn_support.cpp); with `2>&1` stdout and stderr keep the order the tool wrote them in.
TEST_F(Runsc, StdoutAndStderrToOneFileKeepTheirOrder) {
  TempDir work;
  const std::string out_path = work / "out";
  (void)shell_output(": | " + shell_quote(JAIL_BINARY) +
                     " -q --runtime runsc --no-cwd -- sh -c 'for i in 1 2 3 4; do echo o$i; "
                     "echo e$i >&2; done' >" +
                     out_path + " 2>&1");
  EXPECT_EQ(read_file(out_path).value_or(""), "o1\ne1\no2\ne2\no3\ne3\no4\ne4\n");
}

// jail started with its stdin closed: the first fd it opened took number 0 and was taken for
// the caller's stdin — the supervisor's signalfd, whose records (a host pid among them) the
// relay passed to the tool, which otherwise never saw end of file. Now fd 0 is /dev/null's.
TEST_F(Runsc, ClosedStdinReadsAsEndOfFile) {
  RunOptions options;
  options.stdin_closed = true;
  options.timeout = 20s;
  // The tool ignores SIGUSR1, which jail forwards: what it reads is only what its stdin holds.
  JailProcess jail({"--runtime", "runsc", "--no-cwd", "--", "sh", "-c",
                    "trap '' USR1; echo started; head -c 64 | od -An -tx1; echo read=$?"},
                   options);
  ASSERT_TRUE(jail.wait_for_stdout("started", 15s)) << "the tool did not start";
  // With the signalfd on fd 0, this signal's record (a host pid in it) was the tool's input.
  ASSERT_EQ(::kill(jail.pid(), SIGUSR1), 0);
  RunResult r = jail.wait(20s);
  EXPECT_FALSE(r.timed_out) << "the tool never saw end of file: " << describe(r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "started\nread=0\n") << "the tool read something from a closed stdin";
}

TEST_F(Runsc, TimeoutEndsTheSandbox) {
  TempDir work;
  const auto start = std::chrono::steady_clock::now();
  RunResult r = runsc({"--timeout", "1s", "--kill-grace", "1s", "--status-file", work / "s.json",
                       "--no-cwd", "--", "sleep", "60"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 124) << describe(r);
  EXPECT_LT(seconds, scaled(15.0));
  const auto status = nlohmann::json::parse(read_file(work / "s.json").value_or("{}"));
  EXPECT_EQ(status["outcome"], "timeout") << status.dump();
  EXPECT_EQ(status["limit_hit"], "wall_time") << status.dump();
}

// Signals for the tool reach the tool, as a native jail's init forwards them: sent to `runsc run`
// they ended runsc itself (SIGTERM: exit 125, "internal_error") or were lost (SIGUSR1), and the
// timeout's SIGTERM gave the tool no chance to finish.
TEST_F(Runsc, SignalsReachTheTool) {
  const std::string loop = "echo ready; while :; do sleep 0.1; done";
  {
    JailProcess jail({"--runtime", "runsc", "--no-cwd", "--", "sh", "-c",
                      "trap 'echo got-usr1; exit 7' USR1; " + loop},
                     {});
    ASSERT_TRUE(jail.wait_for_stdout("ready", 15s)) << "the tool did not start";
    ASSERT_EQ(::kill(jail.pid(), SIGUSR1), 0);
    RunResult r = jail.wait(20s);
    EXPECT_EQ(r.exit_code, 7) << describe(r);
    EXPECT_NE(r.out.find("got-usr1"), std::string::npos) << describe(r);
  }
  {
    TempDir work;
    JailProcess jail({"--runtime", "runsc", "--status-file", work / "s.json", "--no-cwd", "--",
                      "sh", "-c", loop},
                     {});
    ASSERT_TRUE(jail.wait_for_stdout("ready", 15s)) << "the tool did not start";
    ASSERT_EQ(::kill(jail.pid(), SIGTERM), 0);
    RunResult r = jail.wait(20s);
    EXPECT_EQ(r.exit_code, 128 + SIGTERM) << describe(r);
    const auto status = nlohmann::json::parse(read_file(work / "s.json").value_or("{}"));
    EXPECT_EQ(status["outcome"], "signaled") << status.dump();
    EXPECT_EQ(status["signal"], SIGTERM) << status.dump();
  }
  {
    // A terminal's Ctrl-C: SIGINT to every process of the foreground job. runsc run and its
    // gofer were in jail's process group and died of it before the tool saw anything.
    JailProcess jail({"--runtime", "runsc", "--no-cwd", "--", "sh", "-c",
                      "trap 'echo got-int; exit 9' INT; " + loop},
                     {.own_process_group = true});
    ASSERT_TRUE(jail.wait_for_stdout("ready", 15s)) << "the tool did not start";
    ASSERT_EQ(::kill(-jail.pid(), SIGINT), 0);
    RunResult r = jail.wait(20s);
    EXPECT_EQ(r.exit_code, 9) << describe(r);
    EXPECT_NE(r.out.find("got-int"), std::string::npos) << describe(r);
  }
  RunResult timed = runsc({"--timeout", "2s", "--kill-grace", "5s", "--no-cwd", "--", "sh", "-c",
                           "trap 'echo got-term; exit 5' TERM; " + loop});
  EXPECT_EQ(timed.exit_code, 124) << describe(timed);
  EXPECT_NE(timed.out.find("got-term"), std::string::npos)
      << "the timeout's SIGTERM did not reach the tool: " << describe(timed);
}

// What runsc would do silently is refused before it starts: a mount under /dev (gVisor's /dev
// is its own; the mount was dropped from the bundle), a working directory that does not exist
// (runsc's gofer created it as root on the host, through a read-only bind too), and a terminal
// for the tool (--tty always was ignored: the tool's stdio is relayed through pipes).
TEST_F(Runsc, WhatRunscWouldDoSilentlyIsRefused) {
  RunResult tty = runsc({"--tty", "always", "--no-cwd", "--", "echo", "ran"});
  EXPECT_EQ(tty.exit_code, 125) << describe(tty);
  EXPECT_EQ(tty.out, "") << describe(tty);
  TempDir work;
  std::filesystem::create_directory(work / "here");
  RunResult dev = runsc({"--bind", work.path() + ":/dev/work", "--no-cwd", "--", "echo", "ran"});
  EXPECT_EQ(dev.exit_code, 125) << describe(dev);
  EXPECT_EQ(dev.out, "") << describe(dev);
  EXPECT_NE(dev.err.find("under /dev"), std::string::npos) << describe(dev);
  for (const char* bind : {"--bind", "--ro-bind"}) {
    RunResult missing =
        runsc({bind, work.path() + ":/w", "--cwd", "/w/absent", "--", "echo", "ran"});
    EXPECT_EQ(missing.exit_code, 125) << bind << ": " << describe(missing);
    EXPECT_EQ(missing.out, "") << describe(missing);
    EXPECT_NE(missing.err.find("working directory /w/absent"), std::string::npos)
        << describe(missing);
    EXPECT_FALSE(std::filesystem::exists(work / "absent"))
        << bind << ": the missing working directory was made on the host";
  }
  RunResult root = runsc({"--no-cwd", "--cwd", "/absent", "--", "echo", "ran"});
  EXPECT_EQ(root.exit_code, 125) << describe(root);
  // Resolved as the jail resolves it: a symlink in one bind that leads, through the jail's
  // root, into another (read-only) one is followed there, not inside the first bind's source.
  std::filesystem::create_directories(work / "rw");
  std::filesystem::create_directories(work / "ro");
  std::filesystem::create_symlink("..", work / "rw/up");
  RunResult through_link = runsc({"--bind", work / "rw" + ":/rw", "--ro-bind", work / "ro" + ":/ro",
                                  "--cwd", "/rw/up/ro/made", "--", "pwd"});
  EXPECT_EQ(through_link.exit_code, 125) << describe(through_link);
  EXPECT_FALSE(std::filesystem::exists(work / "ro/made"))
      << "runsc made the working directory on the host, through the read-only bind";
  // And a directory reached through the root's own links (/lib -> usr/lib) is there.
  RunResult linked = runsc({"--no-cwd", "--cwd", "/lib", "--", "true"});
  EXPECT_EQ(linked.exit_code, 0) << describe(linked);
  RunResult present = runsc({"--bind", work.path() + ":/w", "--cwd", "/w/here", "--", "pwd"});
  EXPECT_EQ(present.exit_code, 0) << describe(present);
  EXPECT_EQ(present.out, "/w/here\n");
}

// The policy goes to runsc with --oci-seccomp: a call it kills never succeeds inside gVisor, and
// the run ends there, as a native one does.
TEST_F(Runsc, PolicyAppliesInsideTheSandbox) {
  RunResult r = runsc({"--no-cwd", "--", "sh", "-c", "unshare -U true; echo after=$?"});
  EXPECT_EQ(r.exit_code, 159) << describe(r);
  EXPECT_EQ(r.out.find("after=0"), std::string::npos)
      << "unshare -U succeeded under gVisor: " << describe(r);
  EXPECT_NE(r.err.find("denied unshare"), std::string::npos) << describe(r);
  RunResult unfiltered = runsc({"--policy", "none", "--no-cwd", "--", "sh", "-c", "echo ok"});
  EXPECT_EQ(unfiltered.exit_code, 0) << describe(unfiltered);
  EXPECT_NE(unfiltered.err.find("WITHOUT a seccomp filter"), std::string::npos)
      << describe(unfiltered);
}

// What the default policy allows works under gVisor too: glibc's threads (clone3 must fail with
// ENOSYS for glibc to fall back to clone, and runsc answers every errno rule with EPERM but for
// the TRACE form jail writes), and pselect6, which gVisor's profile reader calls "pselect".
TEST_F(Runsc, ThreadsAndPselectWorkUnderTheDefaultPolicy) {
  const std::string script =
      "import ctypes, errno, threading\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "result = libc.syscall(435, 0, 0)\n"
      "print('clone3', result, errno.errorcode[ctypes.get_errno()])\n"
      "t = threading.Thread(target=print, args=('thread ran',))\n"
      "t.start()\n"
      "t.join()\n"
      "zero = (ctypes.c_long * 2)(0, 0)\n"
      "print('pselect6', libc.syscall(270, 0, None, None, None, zero, None))\n";
  RunResult r = runsc({"--no-cwd", "--", "python3", "-c", script});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "clone3 -1 ENOSYS\nthread ran\npselect6 0\n") << describe(r);
}

// gVisor applies the policy itself; jail still reports what it refused, from the sentry's debug
// log: an errno denial with the run going on, then a killed call that ends the sandbox as a
// native run's would — even when the tool ignores the SIGSYS gVisor sends it.
TEST_F(Runsc, DeniedSyscallsAreReportedInTheResult) {
  TempDir work;
  // How long the tool would go on after the killed call, were the sandbox not ended there.
  const double went_on_after = scaled(5.0);
  write_file(work / "probe.py",
             "import ctypes, signal, sys, time\n"
             "signal.signal(signal.SIGSYS, signal.SIG_IGN)\n"
             "libc = ctypes.CDLL(None, use_errno=True)\n"
             "print('sethostname', libc.syscall(170, b'x', 1), ctypes.get_errno(), flush=True)\n"
             "libc.syscall(101, 0, 0, 0, 0)\n"
             "time.sleep(" +
                 std::to_string(went_on_after) +
                 ")\n"
                 "print('went on after ptrace', flush=True)\n");
  const auto start = std::chrono::steady_clock::now();
  RunResult r =
      runsc({"--status-file", work / "s.json", "--", "python3", "probe.py"}, {.cwd = work.path()});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 159) << describe(r);
  EXPECT_NE(r.out.find("sethostname -1 1\n"), std::string::npos) << describe(r);
  EXPECT_EQ(r.out.find("went on"), std::string::npos) << describe(r);
  EXPECT_LT(seconds, went_on_after) << "the sandbox was not ended at the killed call";
  const auto status = nlohmann::json::parse(read_file(work / "s.json").value_or("{}"));
  EXPECT_EQ(status["outcome"], "violation") << status.dump();
  EXPECT_EQ(status["violation"]["syscall"], "ptrace") << status.dump();
  EXPECT_EQ(status["violation"]["action"], "kill") << status.dump();
  ASSERT_GE(status["denials"]["count"].get<int>(), 2) << status.dump();
  bool sethostname_seen = false;
  for (const auto& denial : status["denials"]["first"]) {
    if (denial["syscall"] == "sethostname") {
      sethostname_seen = true;
      EXPECT_EQ(denial["action"], "errno EPERM") << status.dump();
    }
  }
  EXPECT_TRUE(sethostname_seen) << status.dump();
  EXPECT_NE(r.err.find("denied ptrace"), std::string::npos) << describe(r);

  // Nothing denied: nothing reported.
  RunResult clean = runsc({"--status-file", work / "clean.json", "--no-cwd", "--", "true"});
  EXPECT_EQ(clean.exit_code, 0) << describe(clean);
  const auto quiet = nlohmann::json::parse(read_file(work / "clean.json").value_or("{}"));
  EXPECT_EQ(quiet["denials"]["count"], 0) << quiet.dump();
  EXPECT_TRUE(quiet["violation"].is_null()) << quiet.dump();
}

// jail export-oci writes a bundle that runsc runs by itself.
TEST_F(Runsc, ExportedBundleRunsUnderRunscRun) {
  TempDir work;
  const std::string bundle = work / "bundle";
  RunResult exported = run_jail(
      {"export-oci", "--bundle", bundle, "--no-cwd", "--", "sh", "-c", "echo exported; id -u"});
  ASSERT_EQ(exported.exit_code, 0) << describe(exported);
  const auto config = nlohmann::json::parse(read_file(bundle + "/config.json").value_or("{}"));
  EXPECT_TRUE(config["process"]["noNewPrivileges"].get<bool>());
  EXPECT_TRUE(config["process"]["capabilities"]["bounding"].empty());
  EXPECT_TRUE(config["linux"]["seccomp"].is_object());
  const std::string out = run_exported_bundle(bundle, work / "state");
  EXPECT_NE(out.find("exported\n1000\n"), std::string::npos) << out;
}

// Exported with --runtime runsc, the bundle carries the profile as gVisor reads it, under which
// glibc's threads start (the form for every runtime answers clone3 with EPERM there).
TEST_F(Runsc, BundleExportedForRunscStartsThreads) {
  TempDir work;
  const std::string bundle = work / "bundle";
  RunResult exported = run_jail(
      {"export-oci", "--runtime", "runsc", "--bundle", bundle, "--no-cwd", "--", "python3", "-c",
       "import threading\nt = threading.Thread(target=print, args=('thread ran',))\n"
       "t.start()\nt.join()\n"});
  ASSERT_EQ(exported.exit_code, 0) << describe(exported);
  const auto config = nlohmann::json::parse(read_file(bundle + "/config.json").value_or("{}"));
  EXPECT_NE(config["linux"]["seccomp"].dump().find("SCMP_ACT_TRACE"), std::string::npos);
  const std::string out = run_exported_bundle(bundle, work / "state");
  EXPECT_NE(out.find("thread ran\n"), std::string::npos) << out;
}

// The host-minimal root's /etc under gVisor is the native run's, entry for entry: the same names,
// types, modes, symlink targets and contents (the runsc bundle carries most entries in its rootfs
// instead of binding them; see oci/host_etc.hpp). Owners are left out: the native run's user
// namespace maps no host root (a root caller's tool is a host id of its own), so the host's
// root-owned files show as nobody there, while gVisor shows them as root.
TEST_F(Runsc, EtcIsTheNativeRunsEtc) {
  TempDir work;
  write_file(work / "etc_view.py",
             "import hashlib, os, stat\n"
             "for top, dirs, files in os.walk('/etc'):\n"
             "    dirs.sort()\n"
             "    for name in sorted(dirs + files):\n"
             "        path = os.path.join(top, name)\n"
             "        st = os.lstat(path)\n"
             "        line = f'{path} {stat.filemode(st.st_mode)}'\n"
             "        if stat.S_ISLNK(st.st_mode):\n"
             "            line += ' -> ' + os.readlink(path)\n"
             "        elif stat.S_ISREG(st.st_mode):\n"
             "            line += ' ' + hashlib.sha256(open(path, 'rb').read()).hexdigest()\n"
             "        print(line)\n");
  RunResult native = run_jail({"--", "python3", "etc_view.py"}, {.cwd = work.path()});
  ASSERT_EQ(native.exit_code, 0) << describe(native);
  RunResult gvisor = runsc({"--", "python3", "etc_view.py"}, {.cwd = work.path()});
  ASSERT_EQ(gvisor.exit_code, 0) << describe(gvisor);
  EXPECT_NE(native.out.find("/etc/ld.so.cache -rw-r--r-- "), std::string::npos) << native.out;
  EXPECT_NE(native.out.find("/etc/services -rw-r--r-- "), std::string::npos) << native.out;
  EXPECT_EQ(gvisor.out, native.out);
  EXPECT_EQ(native.out.find("/etc/shadow"), std::string::npos) << native.out;
}

// As natively (Mounts.MountsTakeThePlaceOfTheRootsOwnEntries): a mount at the path of one of
// the root's own symlinks replaces it, where the bundle's rootfs had the link already.
TEST_F(Runsc, MountsTakeThePlaceOfTheRootsOwnEntries) {
  TempDir data;
  write_file(data / "zone", "zone-of-the-caller\n", 0644);
  std::filesystem::create_directory(data / "bin");
  std::filesystem::copy_file("/usr/bin/echo", data / "bin/own-echo");
  RunResult r = runsc({"--ro-bind", (data / "zone") + ":/etc/localtime", "--ro-bind",
                       (data / "bin") + ":/bin", "--no-cwd", "--", "/usr/bin/sh", "-c",
                       "cat /etc/localtime; /bin/own-echo from-the-callers-bin"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "zone-of-the-caller\nfrom-the-callers-bin\n") << describe(r);
}

// An exported bundle is kept and run later: it binds the host's /etc entries rather than
// carrying copies of the day it was written.
TEST_F(Runsc, ExportedBundleBindsTheHostsEtc) {
  TempDir work;
  const std::string bundle = work / "bundle";
  RunResult exported = run_jail({"export-oci", "--bundle", bundle, "--no-cwd", "--", "true"});
  ASSERT_EQ(exported.exit_code, 0) << describe(exported);
  const auto config = nlohmann::json::parse(read_file(bundle + "/config.json").value_or("{}"));
  bool services = false;
  bool conf_dir = false;
  for (const auto& mount : config["mounts"]) {
    const std::string destination = mount["destination"];
    if (mount["type"] != "bind" || !destination.starts_with("/etc/")) continue;
    EXPECT_EQ(mount["source"], destination) << mount.dump();
    services = services || destination == "/etc/services";
    conf_dir = conf_dir || destination == "/etc/ld.so.conf.d";
  }
  EXPECT_TRUE(services) << config["mounts"].dump();
  EXPECT_TRUE(conf_dir) << config["mounts"].dump();
  EXPECT_EQ(std::filesystem::file_size(bundle + "/rootfs/etc/services"), 0u)
      << "an exported bundle's /etc/services is a mount point, not a copy";
}

// Whether a thread of `pid`, or of a process it started, waits in open() for a FIFO's other end.
bool waits_at_a_fifo(pid_t pid) {
  std::vector<pid_t> processes = descendants(pid);
  processes.push_back(pid);
  for (const pid_t process : processes) {
    std::error_code error;
    const std::string tasks = "/proc/" + std::to_string(process) + "/task";
    for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
      if (read_file(task.path() / "wchan").value_or("") == "wait_for_partner") return true;
    }
  }
  return false;
}

// What the start gate relies on in runsc itself: it opens its --log file before it looks at the
// bundle or the state root, so with a FIFO there it waits, even for a bundle that does not
// exist yet. A runsc that read its bundle first would fail here, by name, rather than start
// half-written bundles elsewhere.
TEST_F(Runsc, RunscOpensItsLogBeforeItReadsTheBundle) {
  TempDir work;
  const std::string gate = work / "gate";
  ASSERT_EQ(::mkfifo(gate.c_str(), 0600), 0);
  const std::string log = "--log=" + gate;
  const std::string root = work / "state";
  const std::string bundle = work / "no-bundle-yet";
  const pid_t runsc = ::fork();
  ASSERT_GE(runsc, 0);
  if (runsc == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl("/usr/bin/runsc", "runsc", "--root", root.c_str(), log.c_str(), "run", "--bundle",
            bundle.c_str(), "gate-test", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // runsc comes to its --log FIFO and waits there for a reader, or it ends (having read the
  // missing bundle first).
  int status = 0;
  pid_t ended = 0;
  const bool at_gate = wait_until(
      [&] {
        ended = ::waitpid(runsc, &status, WNOHANG);
        return ended != 0 || waits_at_a_fifo(runsc);
      },
      20s);
  EXPECT_EQ(ended, 0) << "runsc did not wait at its --log FIFO; it exited with status " << status
                      << ", having read the missing bundle before opening its log";
  EXPECT_TRUE(at_gate) << "runsc neither came to its --log FIFO nor ended";
  if (ended == 0) {
    ::kill(runsc, SIGKILL);
    ::waitpid(runsc, &status, 0);
  }
  EXPECT_FALSE(std::filesystem::exists(work / "state")) << "runsc made its state root first";
}

// runsc is started before its bundle is written, and waits at a gate (a FIFO as its error log)
// until it is; the gofer and the sandbox, started later with the same flag, must find an
// ordinary file there instead. A step that fails meanwhile (here the policy) ends the waiting
// runsc: no process and no directory is left.
TEST_F(Runsc, RunscWaitsForItsBundleAndIsEndedIfItNeverComes) {
  TempDir work;
  const std::vector<std::string> env{"TMPDIR=" + work.path()};
  {
    JailProcess alive({"--runtime", "runsc", "--no-cwd", "--", "sh", "-c", "echo up; sleep 2"},
                      {.extra_env = env});
    ASSERT_TRUE(alive.wait_for_stdout("up", 20s));
    EXPECT_GE(processes_with(work.path()), 3) << "runsc, its gofer and sandbox";
    int gates = 0;
    for (const auto& dir : std::filesystem::directory_iterator(work.path())) {
      const std::filesystem::path log = dir.path() / "runsc-error.log";
      ++gates;
      EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::symlink_status(log)))
          << log << " is still the FIFO, or missing";
    }
    EXPECT_EQ(gates, 1);
    RunResult done = alive.wait();
    EXPECT_EQ(done.exit_code, 0) << describe(done);
  }
  EXPECT_EQ(processes_with(work.path()), 0);

  const std::string broken = work / "broken.policy";
  write_file(broken, "this is not a policy\n");
  RunResult r = run_jail({"--runtime", "runsc", "--policy", broken, "--no-cwd", "--", "true"},
                         {.extra_env = env});
  EXPECT_EQ(r.exit_code, 125) << describe(r);
  EXPECT_NE(r.err.find("cannot use policy"), std::string::npos) << describe(r);
  EXPECT_EQ(processes_with(work.path()), 0) << "a runsc was left at its gate";
  int left = 0;
  for (const auto& entry : std::filesystem::directory_iterator(work.path())) {
    if (entry.path().filename() != "broken.policy") ++left;
  }
  EXPECT_EQ(left, 0) << "the run's directory was left behind";
}

// `kill -9 jail` leaves its run's directory (bundle, runsc state); the next runsc run removes
// it. It leaves alone what may still be in use: a directory a live run holds the lock of, one
// made in the last minute, and one named the way older versions (which take no lock) name them.
TEST_F(Runsc, DirectoriesOfKilledRunsAreRemovedByTheNext) {
  namespace fs = std::filesystem;
  TempDir work;
  const std::vector<std::string> env{"TMPDIR=" + work.path()};
  const auto dirs_in_work = [&] {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(work.path())) {
      names.insert(entry.path().filename());
    }
    return names;
  };
  {
    JailProcess killed({"--runtime", "runsc", "--no-cwd", "--", "sh", "-c", "echo up; sleep 30"},
                       {.extra_env = env});
    ASSERT_TRUE(killed.wait_for_stdout("up", 20s));
  }  // SIGKILL
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (processes_with(work.path()) > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(processes_with(work.path()), 0) << "the killed jail's sandbox lives on";
  const std::set<std::string> left = dirs_in_work();
  ASSERT_EQ(left.size(), 1u) << "kill -9 jail leaves its run's directory, which is what is tested";
  const std::string dead = *left.begin();

  // Made "two minutes ago": the dead run's and three that must stay.
  const auto age = [](const std::string& path) {
    const timespec when[2] = {{::time(nullptr) - 120, 0}, {::time(nullptr) - 120, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), when, 0), 0) << path;
  };
  age(work / dead);
  const std::string locked = "jail-runsc-999997-MnOpQr";
  const std::string young = "jail-runsc-999998-GhIjKl";
  const std::string old_format = "jail-runsc-AbCdEf";
  for (const std::string& name : {locked, young, old_format}) fs::create_directory(work / name);
  age(work / locked);
  age(work / old_format);
  const int lock = ::open((work / locked).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_EQ(::flock(lock, LOCK_EX), 0);

  RunResult next = run_jail({"--runtime", "runsc", "--no-cwd", "--", "true"}, {.extra_env = env});
  ::close(lock);
  EXPECT_EQ(next.exit_code, 0) << describe(next);
  EXPECT_EQ(dirs_in_work(), (std::set<std::string>{locked, young, old_format}));
}

// runsc and everything it starts (gofer, sentry, the ptrace platform's stubs) live in the jail's
// cgroup from their first instruction: runsc joins it before it is exec'd, so nothing of it can
// fork outside the limits. jail's own child, the keeper that starts runsc and reaps what it
// leaves (runsc/keeper.hpp, named jail-keeper), stays out: the cgroup's kill must not end it
// first.
TEST_F(Runsc, EveryRunscProcessIsInTheJailsCgroup) {
  JailProcess jail(
      {"--runtime", "runsc", "--pids", "256", "--no-cwd", "--", "sh", "-c", "echo up; sleep 5"},
      {});
  ASSERT_TRUE(jail.wait_for_stdout("up", 20s));
  std::map<pid_t, pid_t> parent_of;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_file(entry.path() / "stat").value_or("");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    fields >> state >> ppid;
    parent_of[std::stoi(name)] = ppid;
  }
  const std::string marker = "/jail-" + std::to_string(jail.pid()) + "-";
  int descendants = 0;
  int keepers = 0;
  for (const auto& [pid, ppid] : parent_of) {
    pid_t up = ppid;
    while (up > 1 && up != jail.pid()) up = parent_of.contains(up) ? parent_of[up] : 0;
    if (up != jail.pid()) continue;
    const std::string cgroups = read_file("/proc/" + std::to_string(pid) + "/cgroup").value_or("");
    if (cgroups.empty()) continue;  // gone meanwhile
    if (ppid == jail.pid()) {
      ++keepers;
      EXPECT_EQ(cgroups.find(marker), std::string::npos) << "the keeper " << pid << ":\n"
                                                         << cgroups;
      // Named, so that `ps` tells it from jail.
      EXPECT_EQ(read_file("/proc/" + std::to_string(pid) + "/comm").value_or(""), "jail-keeper\n");
      continue;
    }
    ++descendants;
    EXPECT_NE(cgroups.find(marker), std::string::npos) << "pid " << pid << ":\n" << cgroups;
  }
  EXPECT_EQ(keepers, 1) << "jail's one child";
  EXPECT_GE(descendants, 3) << "runsc, its gofer and its sandbox";
  RunResult r = jail.wait();
  EXPECT_EQ(r.exit_code, 0) << describe(r);
}

}  // namespace
}  // namespace jail_test
