#include "seccomp/reroute.hpp"

#include <algorithm>

namespace jail {

policy::Condition arg_compare(int arg, std::uint64_t mask, policy::CmpOp op, std::uint64_t value) {
  policy::Condition condition;
  condition.arg = arg;
  condition.mask = mask;
  condition.op = op;
  condition.value = value;
  return condition;
}

policy::Condition both(const std::optional<policy::Condition>& own, policy::Condition extra) {
  if (!own) return extra;
  policy::Condition all;
  all.kind = policy::Condition::Kind::all_of;
  all.operands = {*own, std::move(extra)};
  return all;
}

policy::Rule kernel_refusal(int nr, int err, std::optional<policy::Condition> condition,
                            std::string why) {
  policy::Rule rule;
  rule.syscall = nr;
  rule.action.kind = policy::ActionKind::errno_code;
  rule.action.errno_value = static_cast<std::uint16_t>(err);
  rule.action.quiet = true;
  rule.condition = std::move(condition);
  rule.condition_text = std::move(why);
  return rule;
}

policy::Rule to_supervisor(policy::Rule allowed) {
  allowed.action = policy::Action{policy::ActionKind::log, 0};
  return allowed;
}

policy::Policy reroute_allowed(const policy::Policy& policy, std::span<const int> numbers,
                               const Reroute& reroute) {
  const auto rerouted = [&](int number) {
    return std::find(numbers.begin(), numbers.end(), number) != numbers.end();
  };
  policy::Policy result = policy;
  result.rules.clear();
  for (const policy::Rule& rule : policy.rules) {
    if (rule.action.kind == policy::ActionKind::allow && rerouted(rule.syscall)) {
      reroute(result.rules, rule);
    } else {
      result.rules.push_back(rule);
    }
  }
  if (policy.default_action.kind == policy::ActionKind::allow) {
    for (const int number : numbers) {
      policy::Rule by_default;
      by_default.syscall = number;
      by_default.action = policy.default_action;
      by_default.where = policy.default_where;
      reroute(result.rules, by_default);
    }
  }
  return result;
}

}  // namespace jail
