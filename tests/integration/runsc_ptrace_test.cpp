// A policy that lets ptrace run does not hold under gVisor: its sentry checks a call against the
// filter before a tracer's syscall-entry stop and not after it, so the tracer can change an
// allowed call into one the policy refuses, and that call runs. Linux checks again after the stop
// (since 4.8). jail refuses such a policy wherever gVisor would apply it, and says so when it
// writes one into a bundle for any runtime.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "run_jail.hpp"
#include "runsc_fixture.hpp"

namespace jail_test {
namespace {

// The tracer's child calls getppid (allowed); at the entry stop the tracer makes it unshare(0),
// which the default policy kills. If unshare runs, the child is told 0 (getppid never is).
constexpr const char* kTracerProbe = R"(import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long
libc.syscall.restype = ctypes.c_long
TRACEME, GETREGS, SETREGS, SYSCALL = 0, 12, 13, 24
GETPPID, UNSHARE = 110, 272
ORIG_RAX, RDI = 15, 14  # in struct user_regs_struct
pid = os.fork()
if pid == 0:
    libc.ptrace(TRACEME, 0, None, None)
    os.kill(os.getpid(), signal.SIGSTOP)
    os.write(1, b"child: the call returned %d\n" % libc.syscall(GETPPID))
    os._exit(0)
os.waitpid(pid, 0)
regs = (ctypes.c_ulonglong * 27)()
changed = False
while True:
    libc.ptrace(SYSCALL, pid, None, None)
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) or os.WIFSIGNALED(status):
        break
    libc.ptrace(GETREGS, pid, None, ctypes.byref(regs))
    if not changed and regs[ORIG_RAX] == GETPPID:
        regs[ORIG_RAX], regs[RDI] = UNSHARE, 0
        changed = libc.ptrace(SETREGS, pid, None, ctypes.byref(regs)) == 0
print("tracer: changed the call:", changed, flush=True)
)";

constexpr const char* kBypassed = "child: the call returned 0\n";

std::string write_traced_policy(const TempDir& work) {
  const std::string path = work / "traced.policy";
  write_file(path, "allow ptrace\ninclude \"default\"\n");
  return path;
}

// The contrast that makes the refusal necessary: the same probe under the same policy, natively
// (the kernel kills the changed call) and under runsc with the policy as gVisor applies it (the
// changed call runs). The bundle is exported for any runtime, which jail warns about.
TEST_F(Runsc, GvisorLetsATracerChangeACallPastThePolicyWhereLinuxDoesNot) {
  TempDir work;
  const std::string policy = write_traced_policy(work);

  RunResult native =
      run_jail({"--no-cwd", "--policy", policy, "--", "python3", "-c", kTracerProbe});
  EXPECT_EQ(native.out.find(kBypassed), std::string::npos) << describe(native);
  EXPECT_NE(native.err.find("denied unshare"), std::string::npos) << describe(native);

  const std::string bundle = work / "bundle";
  RunResult exported = run_jail({"export-oci", "--bundle", bundle, "--no-cwd", "--policy", policy,
                                 "--", "python3", "-c", kTracerProbe});
  ASSERT_EQ(exported.exit_code, 0) << describe(exported);
  EXPECT_NE(exported.err.find("lets ptrace run: under gVisor (runsc) a tracer can change a call"),
            std::string::npos)
      << describe(exported);
  // When this fails, gVisor checks the filter again after the stop, and the refusal below (and
  // policy::ptrace_can_run's use) can go.
  const std::string out = run_exported_bundle(bundle, work / "state");
  EXPECT_NE(out.find("tracer: changed the call: True"), std::string::npos) << out;
  EXPECT_NE(out.find(kBypassed), std::string::npos) << out;
}

// Both ways jail hands runsc a policy (its loader inside the sandbox; an OCI profile when it
// leaves the command to runsc's search, here by an empty PATH entry) refuse it before the tool
// runs, as does a bundle exported for runsc.
TEST_F(Runsc, APolicyThatLetsPtraceRunIsRefused) {
  TempDir work;
  const std::string policy = write_traced_policy(work);
  for (const bool as_profile : {false, true}) {
    SCOPED_TRACE(as_profile ? "as an OCI profile" : "through jail's loader");
    std::vector<std::string> args{"--no-cwd", "--policy", policy};
    if (as_profile) args.insert(args.end(), {"--env", "PATH=:/usr/bin"});
    args.insert(args.end(), {"--", "python3", "-c", kTracerProbe});
    RunResult r = runsc(args);
    EXPECT_EQ(r.exit_code, 125) << describe(r);
    EXPECT_NE(r.err.find("lets ptrace run, which gVisor (runsc) cannot hold it to"),
              std::string::npos)
        << describe(r);
    EXPECT_NE(r.err.find("put `kill ptrace` ahead of the rules that allow it"), std::string::npos)
        << describe(r);
    EXPECT_EQ(r.out, "") << describe(r);
  }

  const std::string bundle = work / "bundle";
  RunResult exported = run_jail({"export-oci", "--runtime", "runsc", "--bundle", bundle, "--no-cwd",
                                 "--policy", policy, "--", "true"});
  EXPECT_NE(exported.exit_code, 0) << describe(exported);
  EXPECT_NE(exported.err.find("lets ptrace run, which gVisor (runsc) cannot hold it to"),
            std::string::npos)
      << describe(exported);
  EXPECT_FALSE(std::filesystem::exists(bundle + "/config.json")) << describe(exported);
}

// `jail policy export --format runsc` writes no profile gVisor cannot hold; --format oci, for
// runc and crun (which Linux holds), still does.
TEST(PolicyExportForRunsc, APolicyThatLetsPtraceRunIsNotWrittenForRunsc) {
  TempDir work;
  const std::string policy = write_traced_policy(work);
  const std::string out = work / "out.json";
  RunResult refused = run_jail({"policy", "export", policy, "--format", "runsc", "-o", out});
  EXPECT_EQ(refused.exit_code, 1) << describe(refused);
  EXPECT_NE(refused.err.find("lets ptrace run, which gVisor (runsc) cannot hold a tool to"),
            std::string::npos)
      << describe(refused);
  EXPECT_FALSE(std::filesystem::exists(out));
  RunResult oci = run_jail({"policy", "export", policy, "--format", "oci", "-o", out});
  EXPECT_EQ(oci.exit_code, 0) << describe(oci);
  EXPECT_TRUE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace jail_test
