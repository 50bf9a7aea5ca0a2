#include <set>

#include "policy/constants.hpp"
#include "policy/policy.hpp"

namespace jail::policy {

bool lets_run(const Action& action) {
  return action.kind == ActionKind::allow || action.kind == ActionKind::log;
}

std::string to_string(const Action& action) {
  switch (action.kind) {
    case ActionKind::allow:
      return "allow";
    case ActionKind::kill:
      return "kill";
    case ActionKind::log:
      return "log";
    case ActionKind::trap:
      return "trap";
    case ActionKind::errno_code: {
      std::string_view name = errno_name(action.errno_value);
      return std::string(action.quiet ? "quietly " : "") + "errno " +
             (name.empty() ? std::to_string(action.errno_value) : std::string(name));
    }
  }
  return "?";
}

std::string_view to_string(CmpOp op) {
  switch (op) {
    case CmpOp::eq:
      return "==";
    case CmpOp::ne:
      return "!=";
    case CmpOp::lt:
      return "<";
    case CmpOp::le:
      return "<=";
    case CmpOp::gt:
      return ">";
    case CmpOp::ge:
      return ">=";
  }
  return "?";
}

std::vector<const Rule*> Policy::rules_for(int syscall) const {
  std::vector<const Rule*> out;
  for (const Rule& r : rules)
    if (r.syscall == syscall) out.push_back(&r);
  return out;
}

std::vector<int> Policy::syscalls() const {
  std::set<int> numbers;
  for (const Rule& r : rules) numbers.insert(r.syscall);
  return {numbers.begin(), numbers.end()};
}

}  // namespace jail::policy
