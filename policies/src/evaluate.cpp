#include "policy/evaluate.hpp"

#include <linux/audit.h>

#include "arch.hpp"

namespace jail::policy {

bool holds(const Condition& c, const std::uint64_t (&args)[6]) {
  switch (c.kind) {
    case Condition::Kind::all_of:
      for (const auto& op : c.operands)
        if (!holds(op, args)) return false;
      return true;
    case Condition::Kind::any_of:
      for (const auto& op : c.operands)
        if (holds(op, args)) return true;
      return false;
    case Condition::Kind::compare:
      break;
  }
  std::uint64_t x = args[c.arg] & c.mask;
  switch (c.op) {
    case CmpOp::eq:
      return x == c.value;
    case CmpOp::ne:
      return x != c.value;
    case CmpOp::lt:
      return x < c.value;
    case CmpOp::le:
      return x <= c.value;
    case CmpOp::gt:
      return x > c.value;
    case CmpOp::ge:
      return x >= c.value;
  }
  return false;
}

const Action& decide(const std::vector<const Rule*>& rules, const Action& default_action,
                     const std::uint64_t (&args)[6]) {
  for (const Rule* r : rules)
    if (!r->condition || holds(*r->condition, args)) return r->action;
  return default_action;
}

Decision evaluate(const Policy& policy, const struct seccomp_data& data) {
  // The same prefix the compiled filter starts with (see compile.cpp).
  if (data.arch != AUDIT_ARCH_X86_64)
    return Decision{Action{ActionKind::kill, 0}, SourceLocation{detail::kArchCheck, 0, 0}, false};
  if ((static_cast<std::uint32_t>(data.nr) & detail::kX32SyscallBit) != 0)
    return Decision{Action{ActionKind::kill, 0}, SourceLocation{detail::kX32Check, 0, 0}, false};
  std::uint64_t args[6];
  for (int i = 0; i < 6; ++i) args[i] = data.args[i];
  for (const Rule& r : policy.rules) {
    if (r.syscall != data.nr) continue;
    if (!r.condition || holds(*r.condition, args))
      return Decision{r.action, r.where, false, r.baseline};
  }
  return Decision{policy.default_action, policy.default_where, true};
}

}  // namespace jail::policy
