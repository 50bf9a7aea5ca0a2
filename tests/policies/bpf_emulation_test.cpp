// A classic-BPF interpreter in the test, to check compiled programs against evaluate() over
// far more inputs than forking allows, and to prove the property the kernel's seccomp action
// cache needs: for an always-allowed syscall the path reads nothing but nr and arch.
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/syscall.h>

#include <cstring>
#include <random>

#include "policy/compile.hpp"
#include "policy/evaluate.hpp"
#include "policy/syscalls.hpp"

namespace jail::policy {
namespace {

struct Outcome {
  std::uint32_t ret = 0;
  bool read_args = false;  // the path loaded something other than nr/arch
};

Outcome run(const std::vector<sock_filter>& prog, const seccomp_data& data) {
  Outcome out;
  std::uint32_t a = 0;
  std::size_t pc = 0;
  unsigned char bytes[sizeof data];
  std::memcpy(bytes, &data, sizeof data);
  while (pc < prog.size()) {
    const sock_filter& f = prog[pc];
    switch (BPF_CLASS(f.code)) {
      case BPF_LD:
        EXPECT_EQ(f.code, BPF_LD | BPF_W | BPF_ABS);
        EXPECT_LE(f.k + 4, sizeof data);
        if (f.k != offsetof(seccomp_data, nr) && f.k != offsetof(seccomp_data, arch))
          out.read_args = true;
        std::memcpy(&a, bytes + f.k, 4);
        ++pc;
        break;
      case BPF_ALU:
        EXPECT_EQ(f.code, BPF_ALU | BPF_AND | BPF_K);
        a &= f.k;
        ++pc;
        break;
      case BPF_RET:
        out.ret = f.k;
        return out;
      case BPF_JMP: {
        bool taken = false;
        switch (BPF_OP(f.code)) {
          case BPF_JA:
            pc += 1 + f.k;
            continue;
          case BPF_JEQ:
            taken = a == f.k;
            break;
          case BPF_JGT:
            taken = a > f.k;
            break;
          case BPF_JGE:
            taken = a >= f.k;
            break;
          case BPF_JSET:
            taken = (a & f.k) != 0;
            break;
          default:
            ADD_FAILURE() << "unexpected jump " << f.code;
        }
        pc += 1 + (taken ? f.jt : f.jf);
        break;
      }
      default:
        ADD_FAILURE() << "unexpected instruction class " << f.code;
        return out;
    }
  }
  ADD_FAILURE() << "ran off the end of the program";
  return out;
}

std::uint32_t expected_ret(const Decision& d, Routing routing) {
  // The architecture checks: killed by the supervisor under notify, which names the call.
  if (d.where.line == 0)
    return routing == Routing::notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_KILL_PROCESS;
  switch (d.action.kind) {
    case ActionKind::allow:
      return SECCOMP_RET_ALLOW;
    case ActionKind::errno_code:
      // A quiet refusal is answered in the kernel whatever the routing.
      return routing == Routing::notify && !d.action.quiet
                 ? SECCOMP_RET_USER_NOTIF
                 : SECCOMP_RET_ERRNO | d.action.errno_value;
    case ActionKind::kill:
      return routing == Routing::notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_KILL_PROCESS;
    case ActionKind::log:
      return routing == Routing::notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_LOG;
    case ActionKind::trap:
      return routing == Routing::notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_TRAP;
  }
  return 0;
}

// A policy `within` another is lowered to the product of both rule lists: the compiled filter
// must decide as the evaluator does there too, at the values both policies' rules name.
TEST(BpfEmulation, PoliciesWithinEachShippedPolicyAgreeWithTheEvaluator) {
  std::mt19937_64 rng(99);
  const std::uint64_t interesting[] = {
      0,          1,    2, 10, 17, 0x5401, 0x5412, 0x10000, CLONE_THREAD, CLONE_THREAD | CLONE_VM,
      0x7e020000, ~0ULL};
  for (const auto& base : shipped_policy_names()) {
    const Policy p = parse_policy("default errno EPERM\nwithin \"" + base +
                                      "\"\nallow read ptrace personality\n"
                                      "allow socket if arg0 in {AF_UNIX, AF_PACKET}\n"
                                      "allow clone if (arg0 & CLONE_THREAD) == CLONE_THREAD\n"
                                      "allow ioctl if arg1 in {TCGETS, TIOCSTI}\n",
                                  "learned.policy");
    for (Routing routing : {Routing::direct, Routing::notify}) {
      Program prog = compile(p, routing);
      for (std::uint32_t nr = 0; nr < 480; ++nr) {
        for (int trial = 0; trial < 16; ++trial) {
          seccomp_data d{};
          d.nr = static_cast<int>(nr);
          d.arch = AUDIT_ARCH_X86_64;
          for (auto& arg : d.args)
            arg = trial < 12 ? interesting[(static_cast<std::size_t>(trial) + nr) % 12] : rng();
          ASSERT_EQ(run(prog.instructions, d).ret, expected_ret(evaluate(p, d), routing))
              << base << " " << syscall_name(static_cast<int>(nr)) << " arg0=" << d.args[0]
              << " arg1=" << d.args[1];
        }
      }
    }
  }
}

TEST(BpfEmulation, ShippedPoliciesAgreeWithTheEvaluatorOnEveryNumber) {
  std::mt19937_64 rng(1234);
  const std::uint64_t interesting[] = {0,          1,          8,          0x20000,
                                       0xffffffff, 0x5412,     0x10005412, 0x100005412,
                                       0x10000000, 0x7e020000, ~0ULL,      0x100000000};
  for (const auto& name : shipped_policy_names()) {
    Policy p = load_policy(name);
    for (Routing routing : {Routing::direct, Routing::notify}) {
      Program prog = compile(p, routing);
      for (std::uint32_t nr = 0; nr < 480; ++nr) {
        for (int trial = 0; trial < 24; ++trial) {
          seccomp_data d{};
          d.nr = static_cast<int>(nr);
          d.arch = AUDIT_ARCH_X86_64;
          for (auto& arg : d.args)
            arg = trial < 12 ? interesting[(static_cast<std::size_t>(trial) + nr) % 12] : rng();
          Outcome got = run(prog.instructions, d);
          Decision want = evaluate(p, d);
          ASSERT_EQ(got.ret, expected_ret(want, routing))
              << name << " " << syscall_name(static_cast<int>(nr)) << " arg0=" << d.args[0]
              << " arg1=" << d.args[1];
        }
      }
      // Foreign ABIs never reach the rules: killed, in the kernel or by the supervisor.
      const std::uint32_t foreign =
          routing == Routing::notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_KILL_PROCESS;
      seccomp_data i386{};
      i386.arch = AUDIT_ARCH_I386;
      EXPECT_EQ(run(prog.instructions, i386).ret, foreign);
      seccomp_data x32{};
      x32.arch = AUDIT_ARCH_X86_64;
      x32.nr = 0x40000000 | SYS_read;
      EXPECT_EQ(run(prog.instructions, x32).ret, foreign);
    }
  }
}

TEST(BpfEmulation, AlwaysAllowedSyscallsNeverReadArguments) {
  // The kernel's action cache marks a syscall "always allow" only when the filter's path for
  // it reads nothing but nr and arch; then the filter is skipped for it entirely.
  Policy p = load_policy("default");
  Program prog = compile(p, Routing::notify);
  int constant = 0;
  for (int nr : p.syscalls()) {
    auto rules = p.rules_for(nr);
    if (rules.front()->condition || rules.front()->action.kind != ActionKind::allow) continue;
    seccomp_data d{};
    d.nr = nr;
    d.arch = AUDIT_ARCH_X86_64;
    Outcome got = run(prog.instructions, d);
    EXPECT_EQ(got.ret, SECCOMP_RET_ALLOW) << syscall_name(nr);
    EXPECT_FALSE(got.read_args) << syscall_name(nr) << " reads its arguments";
    ++constant;
  }
  EXPECT_GT(constant, 200);
  seccomp_data ioctl{};
  ioctl.nr = SYS_ioctl;
  ioctl.arch = AUDIT_ARCH_X86_64;
  EXPECT_TRUE(run(prog.instructions, ioctl).read_args);  // the baseline's TIOCSTI check
}

TEST(BpfEmulation, RandomPoliciesAgreeWithTheEvaluator) {
  // Random conditions over random 64-bit constants, masks and operators, nested and/or.
  std::mt19937_64 rng(99);
  const char* ops[] = {"==", "!=", "<", "<=", ">", ">="};
  auto value = [&]() -> std::string {
    static const char* shapes[] = {"0", "1", "0xffffffff", "0x100000000", "0xffffffffffffffff"};
    if (rng() % 3 == 0) return shapes[rng() % 5];
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx",
                  static_cast<unsigned long long>(rng() >> (rng() % 64)));
    return buf;
  };
  auto compare = [&]() {
    std::string arg = "arg" + std::to_string(rng() % 3);
    std::string lhs = rng() % 2 ? "(" + arg + " & " + value() + ")" : arg;
    return lhs + " " + ops[rng() % 6] + " " + value();
  };
  for (int round = 0; round < 40; ++round) {
    std::string text = "default errno ENOENT\n";
    for (int r = 0; r < 6; ++r) {
      std::string cond = compare();
      if (rng() % 2) cond = "(" + cond + " || " + compare() + ") && " + compare();
      text += "errno " + std::to_string(r + 1) + " getppid if " + cond + "\n";
    }
    text += "allow getppid if arg2 == 7\n";
    Policy p = parse_policy(text, "random.policy");
    Program prog = compile(p, Routing::direct);
    for (int trial = 0; trial < 400; ++trial) {
      seccomp_data d{};
      d.nr = SYS_getppid;
      d.arch = AUDIT_ARCH_X86_64;
      for (auto& arg : d.args) arg = rng() >> (rng() % 64);
      ASSERT_EQ(run(prog.instructions, d).ret, expected_ret(evaluate(p, d), Routing::direct))
          << text << "args " << d.args[0] << " " << d.args[1] << " " << d.args[2];
    }
  }
}

}  // namespace
}  // namespace jail::policy
