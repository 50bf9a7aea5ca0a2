#include "seccomp/lookup_policy.hpp"

#include <fcntl.h>

#include <cerrno>
#include <optional>
#include <utility>
#include <vector>

#include "seccomp/lookup_calls.hpp"

namespace jail {
namespace {

policy::Condition compare(int arg, std::uint64_t mask, policy::CmpOp op, std::uint64_t value) {
  policy::Condition condition;
  condition.arg = arg;
  condition.mask = mask;
  condition.op = op;
  condition.value = value;
  return condition;
}

// When a lookup call is left to the kernel even though the trace is on.
std::optional<policy::Condition> kernel_only(const LookupCall& call, std::uint64_t start_envp) {
  if (call.number == SYS_execve)
    return compare(2, ~std::uint64_t{0}, policy::CmpOp::eq, start_envp);
  std::vector<policy::Condition> on_the_fd;
  if (call.empty_path_flags_arg >= 0) {
    on_the_fd.push_back(compare(call.empty_path_flags_arg, AT_EMPTY_PATH, policy::CmpOp::ne, 0));
  }
  if (call.null_path_is_fd) {
    on_the_fd.push_back(compare(call.path_arg, ~std::uint64_t{0}, policy::CmpOp::eq, 0));
  }
  if (on_the_fd.empty()) return std::nullopt;
  if (on_the_fd.size() == 1) return on_the_fd.front();
  policy::Condition either;
  either.kind = policy::Condition::Kind::any_of;
  either.operands = std::move(on_the_fd);
  return either;
}

void add_traced(std::vector<policy::Rule>& rules, const policy::Rule& allowed,
                const LookupCall& call, std::uint64_t start_envp) {
  if (const auto exempt = kernel_only(call, start_envp)) {
    policy::Rule in_kernel = allowed;
    if (allowed.condition) {
      policy::Condition both;
      both.kind = policy::Condition::Kind::all_of;
      both.operands = {*allowed.condition, *exempt};
      in_kernel.condition = both;
    } else {
      in_kernel.condition = *exempt;
    }
    rules.push_back(in_kernel);
  }
  policy::Rule to_supervisor = allowed;
  to_supervisor.action = policy::Action{policy::ActionKind::log, 0};
  rules.push_back(to_supervisor);
}

}  // namespace

policy::Policy with_lookups_traced(const policy::Policy& policy, std::uint64_t start_envp) {
  policy::Policy traced = policy;
  traced.rules.clear();
  for (const policy::Rule& rule : policy.rules) {
    const LookupCall* call = find_lookup_call(rule.syscall);
    if (call == nullptr || rule.action.kind != policy::ActionKind::allow) {
      traced.rules.push_back(rule);
    } else {
      add_traced(traced.rules, rule, *call, start_envp);
    }
  }
  // Rules come first and the first match decides, so these catch exactly the lookups that would
  // have fallen through to an allowing default.
  if (policy.default_action.kind == policy::ActionKind::allow) {
    for (const LookupCall& call : kLookupCalls) {
      policy::Rule by_default;
      by_default.syscall = call.number;
      by_default.action = policy.default_action;
      by_default.where = policy.default_where;
      add_traced(traced.rules, by_default, call, start_envp);
    }
  }
  return traced;
}

}  // namespace jail
