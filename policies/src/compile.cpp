// Policy IR → classic BPF for seccomp. Layout:
//   arch check → x32 check → binary-search dispatch on nr → per-syscall rule chains → returns.
// Syscalls whose first rule is unconditional jump straight from the dispatch tree to their
// return, touching only `nr`; the kernel's seccomp action cache then proves them constant and
// skips the filter for them entirely.
#include "policy/compile.hpp"

#include <linux/audit.h>
#include <linux/seccomp.h>

#include <cstddef>
#include <map>

#include "arch.hpp"
#include "assembler.hpp"

namespace jail::policy {
namespace {

using detail::Assembler;
using Label = Assembler::Label;

constexpr std::uint32_t kOffNr = offsetof(struct seccomp_data, nr);
constexpr std::uint32_t kOffArch = offsetof(struct seccomp_data, arch);
constexpr std::uint32_t kMaxInstructions = BPF_MAXINSNS;  // the kernel's limit per filter
// Below this many syscalls a jeq chain is as short as the tree; above it, the tree wins.
constexpr std::size_t kLinearDispatch = 4;

std::uint32_t arg_low(int arg) {
  return static_cast<std::uint32_t>(offsetof(struct seccomp_data, args) + 8 * arg);
}
std::uint32_t arg_high(int arg) {
  return arg_low(arg) + 4;
}  // x86_64 is little-endian

class Compiler {
 public:
  Compiler(const Policy& p, Routing r) : policy_(p), routing_(r) {}

  Program run() {
    kill_arch_ = as_.label();
    Label arch_ok = as_.label(), dispatch = as_.label();
    as_.stmt(BPF_LD | BPF_W | BPF_ABS, kOffArch);
    as_.jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, arch_ok, kill_arch_);
    as_.bind(arch_ok);
    as_.stmt(BPF_LD | BPF_W | BPF_ABS, kOffNr);
    as_.jump(BPF_JMP | BPF_JSET | BPF_K, detail::kX32SyscallBit, kill_arch_, dispatch);
    as_.bind(dispatch);

    default_ = action_label(policy_.default_action);
    std::vector<int> nrs = policy_.syscalls();
    std::vector<Label> targets;
    std::vector<std::pair<int, Label>> chains;  // syscalls that need argument checks
    for (int nr : nrs) {
      auto rules = policy_.rules_for(nr);
      if (!rules.front()->condition) {
        targets.push_back(action_label(rules.front()->action));
      } else {
        Label l = as_.label();
        targets.push_back(l);
        chains.emplace_back(nr, l);
      }
    }
    tree(nrs, targets, 0, nrs.size());
    for (const auto& [nr, l] : chains) {
      as_.bind(l);
      rule_chain(policy_.rules_for(nr));
    }
    as_.bind(kill_arch_);
    // Under a supervisor a foreign ABI's call (x32, int 0x80) is killed there too, so the jail's
    // end names it (and a child's call ends the jail instead of the child alone, unreported).
    as_.stmt(BPF_RET | BPF_K,
             routing_ == Routing::notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_KILL_PROCESS);
    for (const auto& [value, l] : returns_) {
      as_.bind(l);
      as_.stmt(BPF_RET | BPF_K, value);
    }
    Program prog;
    prog.routing = routing_;
    prog.instructions = as_.finish();
    if (prog.instructions.size() > kMaxInstructions) {
      throw CompileError(
          "policy " + policy_.name + " compiles to " + std::to_string(prog.instructions.size()) +
          " BPF instructions; the kernel accepts at most " + std::to_string(kMaxInstructions) +
          " in one filter: simplify conditions or split the policy");
    }
    return prog;
  }

 private:
  std::uint32_t return_value(const Action& a) const {
    if (a.kind == ActionKind::allow) return SECCOMP_RET_ALLOW;
    // The supervisor sees every denial, logs it with name and arguments, and answers with
    // evaluate()'s action; so in notify routing nothing but allow and the quiet errnos (expected
    // refusals nobody wants reported, at no round trip) is decided in the kernel.
    if (routing_ == Routing::notify && !(a.kind == ActionKind::errno_code && a.quiet)) {
      return SECCOMP_RET_USER_NOTIF;
    }
    switch (a.kind) {
      case ActionKind::errno_code:
        return SECCOMP_RET_ERRNO | (a.errno_value & SECCOMP_RET_DATA);
      case ActionKind::kill:
        return SECCOMP_RET_KILL_PROCESS;  // never KILL_THREAD
      case ActionKind::log:
        return SECCOMP_RET_LOG;
      case ActionKind::trap:
        return SECCOMP_RET_TRAP;
      case ActionKind::allow:
        break;
    }
    return SECCOMP_RET_KILL_PROCESS;
  }

  Label action_label(const Action& a) {
    std::uint32_t v = return_value(a);
    auto it = returns_.find(v);
    if (it != returns_.end()) return it->second;
    Label l = as_.label();
    returns_.emplace(v, l);
    return l;
  }

  // A holds nr. Binary search on [lo, hi) of the sorted numbers; small ranges use jeq chains.
  void tree(const std::vector<int>& nrs, const std::vector<Label>& targets, std::size_t lo,
            std::size_t hi) {
    if (hi - lo <= kLinearDispatch) {
      for (std::size_t i = lo; i < hi; ++i) {
        Label next = i + 1 < hi ? as_.label() : default_;
        as_.jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nrs[i]), targets[i], next);
        if (i + 1 < hi) as_.bind(next);
      }
      if (lo == hi) as_.jump_always(default_);
      return;
    }
    std::size_t mid = lo + (hi - lo) / 2;
    Label left = as_.label(), right = as_.label();
    as_.jump(BPF_JMP | BPF_JGE | BPF_K, static_cast<std::uint32_t>(nrs[mid]), right, left);
    as_.bind(left);
    tree(nrs, targets, lo, mid);
    as_.bind(right);
    tree(nrs, targets, mid, hi);
  }

  // First match wins: each rule's condition jumps to its action or on to the next rule.
  void rule_chain(const std::vector<const Rule*>& rules) {
    for (const Rule* r : rules) {
      Label action = action_label(r->action);
      if (!r->condition) {
        as_.jump_always(action);
        return;  // later rules are unreachable (lint reports them)
      }
      Label next = as_.label();
      condition(*r->condition, action, next);
      as_.bind(next);
    }
    as_.jump_always(default_);
  }

  void condition(const Condition& c, Label t, Label f) {
    switch (c.kind) {
      case Condition::Kind::all_of:
      case Condition::Kind::any_of: {
        bool all = c.kind == Condition::Kind::all_of;
        for (std::size_t i = 0; i < c.operands.size(); ++i) {
          if (i + 1 == c.operands.size()) {
            condition(c.operands[i], t, f);
          } else {
            Label next = as_.label();
            condition(c.operands[i], all ? next : t, all ? f : next);
            as_.bind(next);
          }
        }
        return;
      }
      case Condition::Kind::compare:
        compare(c, t, f);
        return;
    }
  }

  void load_masked(std::uint32_t offset, std::uint32_t mask) {
    as_.stmt(BPF_LD | BPF_W | BPF_ABS, offset);
    if (mask != 0xffffffffU) as_.stmt(BPF_ALU | BPF_AND | BPF_K, mask);
  }

  // (arg & mask) op value on 64 bits, as two 32-bit halves: the high halves decide unless
  // they are equal, then the low halves do. A half whose mask is 0 is known to be 0 and is
  // folded at compile time.
  void compare(const Condition& c, Label t, Label f) {
    switch (c.op) {
      case CmpOp::ne:
        return equal(c, f, t);
      case CmpOp::eq:
        return equal(c, t, f);
      case CmpOp::le:
        return greater(c, false, f, t);
      case CmpOp::gt:
        return greater(c, false, t, f);
      case CmpOp::lt:
        return greater(c, true, f, t);
      case CmpOp::ge:
        return greater(c, true, t, f);
    }
  }

  void equal(const Condition& c, Label t, Label f) {
    auto mh = static_cast<std::uint32_t>(c.mask >> 32), ml = static_cast<std::uint32_t>(c.mask);
    auto vh = static_cast<std::uint32_t>(c.value >> 32), vl = static_cast<std::uint32_t>(c.value);
    if (mh == 0) {
      if (vh != 0) return as_.jump_always(f);
    } else {
      Label low = as_.label();
      load_masked(arg_high(c.arg), mh);
      as_.jump(BPF_JMP | BPF_JEQ | BPF_K, vh, low, f);
      as_.bind(low);
    }
    if (ml == 0) return as_.jump_always(vl == 0 ? t : f);
    load_masked(arg_low(c.arg), ml);
    as_.jump(BPF_JMP | BPF_JEQ | BPF_K, vl, t, f);
  }

  // x > value (or x >= value when or_equal).
  void greater(const Condition& c, bool or_equal, Label t, Label f) {
    auto mh = static_cast<std::uint32_t>(c.mask >> 32), ml = static_cast<std::uint32_t>(c.mask);
    auto vh = static_cast<std::uint32_t>(c.value >> 32), vl = static_cast<std::uint32_t>(c.value);
    if (mh == 0) {
      if (vh != 0) return as_.jump_always(f);  // x's high half is 0 < vh
    } else {
      Label not_greater = as_.label(), low = as_.label();
      load_masked(arg_high(c.arg), mh);
      as_.jump(BPF_JMP | BPF_JGT | BPF_K, vh, t, not_greater);
      as_.bind(not_greater);
      as_.jump(BPF_JMP | BPF_JEQ | BPF_K, vh, low, f);
      as_.bind(low);
    }
    if (ml == 0) return as_.jump_always(or_equal && vl == 0 ? t : f);
    load_masked(arg_low(c.arg), ml);
    as_.jump(BPF_JMP | (or_equal ? BPF_JGE : BPF_JGT) | BPF_K, vl, t, f);
  }

  const Policy& policy_;
  Routing routing_;
  Assembler as_;
  Label kill_arch_ = -1;
  Label default_ = -1;
  std::map<std::uint32_t, Label> returns_;
};

}  // namespace

Program compile(const Policy& policy, Routing routing) {
  return Compiler(policy, routing).run();
}

}  // namespace jail::policy
