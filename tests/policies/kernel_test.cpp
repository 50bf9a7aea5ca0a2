// The compiled filter running in the real kernel: each action, each operator, first-match
// order, 64-bit arguments, ioctl's truncated request, foreign ABIs, threads — and for every
// probe the kernel's answer must equal evaluate()'s.
#include <errno.h>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <random>

#include "../support/time_scale.hpp"
#include "kernel_harness.hpp"
#include "policy/evaluate.hpp"

namespace jail::policy {
namespace {

using testing::ChildEnd;
using testing::kInstallFailed;
using testing::run_filtered;
using testing::syscall_outcome;

// What evaluate() predicts syscall_outcome() sees: 0 allowed, errno, or -SIGSYS.
int predicted(const Policy& p, long nr, const std::vector<unsigned long>& args) {
  seccomp_data d{};
  d.nr = static_cast<int>(nr);
  d.arch = AUDIT_ARCH_X86_64;
  for (std::size_t i = 0; i < args.size(); ++i) d.args[i] = args[i];
  Decision dec = evaluate(p, d);
  switch (dec.action.kind) {
    case ActionKind::allow:
    case ActionKind::log:
      return 0;
    case ActionKind::errno_code:
      return dec.action.errno_value;
    case ActionKind::kill:
    case ActionKind::trap:
      return -SIGSYS;
  }
  return -1;
}

// Runs every probe of `values` in one child (none of them kills), returning the errno each
// got (0: allowed), so hundreds of probes cost one fork.
std::vector<int> probe_all(const Program& prog, long nr, int arg,
                           const std::vector<std::uint64_t>& values) {
  ChildEnd end = run_filtered(prog, [&](int out) {
    for (std::uint64_t v : values) {
      unsigned long a[6] = {0, 0, 0, 0, 0, 0};
      a[arg] = v;
      long r = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
      int result = r == -1 ? errno : 0;
      if (write(out, &result, sizeof result) != sizeof result) return 3;
    }
    return 0;
  });
  EXPECT_TRUE(end.exited && end.code == 0) << "child ended by signal " << end.signal;
  std::vector<int> out(end.output.size() / sizeof(int));
  std::memcpy(out.data(), end.output.data(), out.size() * sizeof(int));
  return out;
}

TEST(Kernel, EachActionHasItsEffect) {
  Policy p = parse_policy(
      "default allow\n"
      "errno EACCES getppid if arg0 == 1\n"
      "kill getppid if arg0 == 2\n"
      "log getppid if arg0 == 3\n"
      "trap getppid if arg0 == 4\n"
      "errno 1234 getppid if arg0 == 5\n",
      "t.policy");
  Program prog = compile(p, Routing::direct);
  EXPECT_EQ(syscall_outcome(prog, SYS_getppid, {0}), 0);
  EXPECT_EQ(syscall_outcome(prog, SYS_getppid, {1}), EACCES);
  EXPECT_EQ(syscall_outcome(prog, SYS_getppid, {2}), -SIGSYS);
  EXPECT_EQ(syscall_outcome(prog, SYS_getppid, {3}), 0);
  // errno values above 255 do not fit an exit code: report them through the pipe.
  ChildEnd big = run_filtered(prog, [](int) {
    long r = syscall(SYS_getppid, 5);
    return r == -1 && errno == 1234 ? 42 : 1;
  });
  EXPECT_EQ(big.code, 42);
  // trap: SIGSYS is delivered to a handler (the process survives if it catches it).
  ChildEnd trapped = run_filtered(prog, [](int) {
    struct sigaction sa {};
    sa.sa_handler = [](int) { _exit(77); };
    sigaction(SIGSYS, &sa, nullptr);
    syscall(SYS_getppid, 4);
    return 1;
  });
  EXPECT_TRUE(trapped.exited);
  EXPECT_EQ(trapped.code, 77);
  // kill ends the process with SIGSYS even when SIGSYS is caught: KILL_PROCESS, not a signal.
  ChildEnd killed = run_filtered(prog, [](int) {
    struct sigaction sa {};
    sa.sa_handler = [](int) { _exit(77); };
    sigaction(SIGSYS, &sa, nullptr);
    syscall(SYS_getppid, 2);
    return 1;
  });
  EXPECT_FALSE(killed.exited);
  EXPECT_EQ(killed.signal, SIGSYS);
}

TEST(Kernel, EveryOperatorAgreesWithTheEvaluator) {
  const char* conditions[] = {
      "arg0 == 0x1234",
      "arg0 != 0x1234",
      "arg0 < 0x1234",
      "arg0 <= 0x1234",
      "arg0 > 0x1234",
      "arg0 >= 0x1234",
      "arg0 == 0x500000007",
      "arg0 < 0x500000007",
      "arg0 <= 0x500000007",
      "arg0 > 0x500000007",
      "arg0 >= 0x500000007",
      "arg0 != 0x500000007",
      "(arg0 & 0xff00) == 0x1200",
      "(arg0 & 0xf00000000) == 0x300000000",
      "(arg0 & 0xffff0000ffff) > 0x100000000",
      "(arg0 & 0xf0) >= 0x10",
      "arg0 in {1, 0x1234, 0x500000007}",
      "arg0 > 2 && arg0 < 10",
      "arg0 == 1 || arg0 == 0x100000001 || (arg0 >= 100 && arg0 <= 200)",
      "(arg0 == 1 || arg0 == 3) && (arg0 & 2) == 2",
      "arg0 >= 0",
      "arg0 > 0xffffffffffffffff",
  };
  std::vector<std::uint64_t> values = {
      0,           1,           2,           3,           9,           10,          100,
      150,         200,         201,         0x10,        0x1200,      0x12ff,      0x1233,
      0x1234,      0x1235,      0xffffffff,  0x100000000, 0x100000001, 0x100001234, 0x300000000,
      0x500000006, 0x500000007, 0x500000008, 0x600000000, 0x4ffffffff, ~0ULL,       ~0ULL - 1};
  for (const char* cond : conditions) {
    SCOPED_TRACE(cond);
    for (int arg : {0, 3, 5}) {
      std::string c = cond;
      for (std::size_t pos; (pos = c.find("arg0")) != std::string::npos;) c.replace(pos, 4, "argX");
      for (std::size_t pos; (pos = c.find("argX")) != std::string::npos;)
        c.replace(pos, 4, "arg" + std::to_string(arg));
      Policy p = parse_policy("default allow\nerrno EDOM getppid if " + c + "\n", "t.policy");
      std::vector<int> got = probe_all(compile(p, Routing::direct), SYS_getppid, arg, values);
      ASSERT_EQ(got.size(), values.size());
      for (std::size_t i = 0; i < values.size(); ++i) {
        std::vector<unsigned long> args(6, 0);
        args[static_cast<std::size_t>(arg)] = values[i];
        EXPECT_EQ(got[i], predicted(p, SYS_getppid, args))
            << "arg" << arg << " = 0x" << std::hex << values[i];
      }
    }
  }
}

TEST(Kernel, RandomPoliciesAgreeWithTheEvaluatorInTheKernel) {
  // Random masks, operators and constants over several arguments, nested && / ||; the same
  // random argument tuples go to the kernel and to evaluate().
  std::mt19937_64 rng(7);
  const char* ops[] = {"==", "!=", "<", "<=", ">", ">="};
  auto value = [&]() {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx",
                  static_cast<unsigned long long>(rng() >> (rng() % 64)));
    return std::string(buf);
  };
  auto compare = [&]() {
    std::string arg = "arg" + std::to_string(rng() % 4);
    std::string lhs = rng() % 2 ? "(" + arg + " & " + value() + ")" : arg;
    return lhs + " " + ops[rng() % 6] + " " + value();
  };
  int allowed = 0, denied = 0;
  for (int round = 0; round < 8; ++round) {
    std::string text = "default allow\n";
    for (int r = 0; r < 5; ++r)
      text += "errno " + std::to_string(r + 1) + " getppid if (" + compare() + " || " + compare() +
              ") && " + compare() + "\n";
    Policy p = parse_policy(text, "random.policy");
    std::vector<std::array<std::uint64_t, 4>> tuples(64);
    for (auto& t : tuples)
      for (auto& a : t) a = rng() >> (rng() % 64);
    ChildEnd end = run_filtered(compile(p, Routing::direct), [&](int out) {
      for (const auto& t : tuples) {
        long r = syscall(SYS_getppid, t[0], t[1], t[2], t[3], 0, 0);
        int result = r == -1 ? errno : 0;
        if (write(out, &result, sizeof result) != sizeof result) return 3;
      }
      return 0;
    });
    ASSERT_TRUE(end.exited && end.code == 0);
    ASSERT_EQ(end.output.size(), tuples.size() * sizeof(int));
    for (std::size_t i = 0; i < tuples.size(); ++i) {
      int got = 0;
      std::memcpy(&got, end.output.data() + i * sizeof(int), sizeof got);
      std::vector<unsigned long> args(tuples[i].begin(), tuples[i].end());
      EXPECT_EQ(got, predicted(p, SYS_getppid, args)) << text << "tuple " << i;
      (got == 0 ? allowed : denied) += 1;
    }
  }
  // The probes exercised both outcomes, so agreement means something.
  EXPECT_GT(allowed, 50);
  EXPECT_GT(denied, 50);
}

TEST(Kernel, HandWrittenExpectationsForSixtyFourBitCompares) {
  // Not just agreement: values straddling the 32-bit boundary land where the text says.
  Policy p = parse_policy(
      "default allow\nerrno EDOM getppid if arg1 > 0xffffffff\n"
      "errno ERANGE getppid if arg1 == 0x100000000\n",
      "t.policy");
  auto got = probe_all(compile(p, Routing::direct), SYS_getppid, 1,
                       {0xffffffff, 0x100000000, 0x1ffffffff, 0, 0x80000000});
  EXPECT_EQ(got, (std::vector<int>{0, EDOM, EDOM, 0, 0}));
}

TEST(Kernel, FirstMatchWinsInFileOrder) {
  Policy p = parse_policy(
      "default errno ENOENT\n"
      "errno EDOM getppid if arg0 < 10\n"
      "errno ERANGE getppid if arg0 < 20\n"
      "allow getppid if arg0 < 30\n"
      "errno EACCES getppid\n"
      "allow getppid\n"
      "allow exit_group exit write\n",
      "t.policy");
  auto got = probe_all(compile(p, Routing::direct), SYS_getppid, 0, {5, 15, 25, 35});
  EXPECT_EQ(got, (std::vector<int>{EDOM, ERANGE, 0, EACCES}));
  EXPECT_EQ(syscall_outcome(compile(p, Routing::direct), SYS_getpid, {}), ENOENT);
}

TEST(Kernel, IoctlRequestHighBitsDoNotBypassTiocsti) {
  Policy p = parse_policy("default allow\n", "t.policy");
  Program prog = compile(p, Routing::direct);
  // fd -1: if the filter let the call through the kernel would say EBADF.
  EXPECT_EQ(syscall_outcome(prog, SYS_ioctl, {~0UL, TIOCSTI}), EPERM);
  EXPECT_EQ(syscall_outcome(prog, SYS_ioctl, {~0UL, TIOCSTI | (1UL << 32)}), EPERM);
  EXPECT_EQ(syscall_outcome(prog, SYS_ioctl, {~0UL, TIOCLINUX | (0xabcUL << 40)}), EPERM);
  EXPECT_EQ(syscall_outcome(prog, SYS_ioctl, {~0UL, TCGETS | (1UL << 32)}), EBADF);
  // A policy's own ioctl rule is matched on the low half too.
  Policy own = parse_policy("default allow\nerrno EDOM ioctl if arg1 == FIONREAD\n", "t.policy");
  EXPECT_EQ(
      syscall_outcome(compile(own, Routing::direct), SYS_ioctl, {~0UL, FIONREAD | (1UL << 63)}),
      EDOM);
}

TEST(Kernel, BaselineRefusesNamespacesClone3AndListeners) {
  Program prog = compile(parse_policy("default allow\n", "t.policy"), Routing::direct);
  EXPECT_EQ(syscall_outcome(prog, SYS_clone3, {0, 0}), ENOSYS);
  EXPECT_EQ(syscall_outcome(prog, SYS_unshare, {CLONE_NEWUSER}), -SIGSYS);
  EXPECT_EQ(syscall_outcome(prog, SYS_clone, {CLONE_NEWUSER | SIGCHLD}), -SIGSYS);
  EXPECT_EQ(syscall_outcome(prog, SYS_clone, {CLONE_NEWNET | SIGCHLD}), -SIGSYS);
  // Without a filter pointer the kernel would say EFAULT; the baseline answers first.
  EXPECT_EQ(syscall_outcome(prog, SYS_seccomp,
                            {SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, 0}),
            EPERM);
  EXPECT_EQ(syscall_outcome(prog, SYS_seccomp, {SECCOMP_SET_MODE_FILTER, 0, 0}), EFAULT);
  // unshare without namespace flags reaches the kernel (EINVAL for an unknown flag bit).
  EXPECT_EQ(syscall_outcome(prog, SYS_unshare, {0x1}), EINVAL);
}

TEST(Kernel, X32SyscallsAreKilled) {
  Program prog = compile(parse_policy("default allow\n", "t.policy"), Routing::direct);
  EXPECT_EQ(syscall_outcome(prog, 0x40000000L | SYS_getppid, {}), -SIGSYS);
  EXPECT_EQ(syscall_outcome(prog, 0x40000000L | 39, {}), -SIGSYS);
  EXPECT_EQ(syscall_outcome(prog, SYS_getppid, {}), 0);
}

int int80_getpid() {
  long ret = 20;  // __NR_getpid on i386
  asm volatile("int $0x80" : "+a"(ret) : : "memory");
  return ret > 0 ? 0 : 1;
}

TEST(Kernel, I386SyscallsAreKilled) {
  // Without IA32 emulation int $0x80 faults before seccomp sees it; say so instead of
  // passing vacuously.
  Program allow_all{};
  allow_all.instructions = {sock_filter{BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW}};
  ChildEnd bare = run_filtered(allow_all, [](int) { return int80_getpid(); });
  if (!(bare.exited && bare.code == 0)) {
    GTEST_SKIP() << "this kernel has no i386 emulation (int $0x80 ended with signal " << bare.signal
                 << ")";
  }
  Program prog = compile(parse_policy("default allow\n", "t.policy"), Routing::direct);
  ChildEnd end = run_filtered(prog, [](int) { return int80_getpid(); });
  EXPECT_FALSE(end.exited);
  EXPECT_EQ(end.signal, SIGSYS);
}

TEST(Kernel, AThreadHittingKillEndsTheWholeProcess) {
  Program prog = compile(parse_policy("default allow\nkill getppid if arg0 == 99\n", "t.policy"),
                         Routing::direct);
  timespec start{}, stop{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  ChildEnd end = run_filtered(prog, [](int) {
    pthread_t t;
    auto fn = [](void*) -> void* {
      syscall(SYS_getppid, 99);
      return nullptr;
    };
    if (pthread_create(&t, nullptr, fn, nullptr) != 0) return 5;
    sleep(10);  // only the thread calls the killed syscall; the main thread must die too
    return 0;
  });
  clock_gettime(CLOCK_MONOTONIC, &stop);
  EXPECT_FALSE(end.exited) << "exit code " << end.code;
  EXPECT_EQ(end.signal, SIGSYS);
  EXPECT_LT(static_cast<double>(stop.tv_sec - start.tv_sec), jail_test::scaled(5.0));
}

TEST(Kernel, ManySyscallsAndLongChainsNeedLongJumps) {
  // Enough rules that conditional targets are far more than 255 instructions away.
  std::string text = "default errno ENOENT\n";
  for (int i = 0; i < 150; ++i)
    text += "errno EDOM getppid if arg0 == " + std::to_string(1000 + i) + "\n";
  text += "errno ERANGE getppid if arg0 == 7\nallow getppid\n";
  text += "allow read write close fstat lseek mmap mprotect munmap brk exit_group exit getpid\n";
  Policy p = parse_policy(text, "t.policy");
  Program prog = compile(p, Routing::direct);
  EXPECT_GT(prog.instructions.size(), 300u);
  auto got = probe_all(prog, SYS_getppid, 0, {1000, 1149, 7, 8, 999});
  EXPECT_EQ(got, (std::vector<int>{EDOM, EDOM, ERANGE, 0, 0}));
  EXPECT_EQ(syscall_outcome(prog, SYS_getuid, {}), ENOENT);
  EXPECT_EQ(syscall_outcome(prog, SYS_getpid, {}), 0);
}

TEST(Kernel, TooLargePoliciesAreRefusedWithTheReason) {
  std::string text = "default allow\n";
  for (int i = 0; i < 2100; ++i)
    text += "errno EDOM getppid if arg0 == 0x" + std::to_string(100000 + i) + "00000001\n";
  Policy p = parse_policy(text, "big.policy");
  try {
    (void)compile(p, Routing::direct);
    FAIL() << "a program over 4096 instructions must be refused";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("the kernel accepts at most 4096"), std::string::npos)
        << e.what();
  }
}

TEST(Kernel, InstallFailureIsVisibleToTheHarness) {
  // A filter the kernel rejects (jump out of range) must not look like a passing probe.
  Program bad{};
  bad.instructions = {sock_filter{BPF_JMP | BPF_JA, 0, 0, 5}};
  ChildEnd end = run_filtered(bad, [](int) { return 0; });
  EXPECT_EQ(end.code, kInstallFailed);
}

}  // namespace
}  // namespace jail::policy
