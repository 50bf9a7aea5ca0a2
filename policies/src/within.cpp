#include "within.hpp"

#include <set>
#include <utility>

#include "policy/diff.hpp"

namespace jail::policy::detail {
namespace {

// One way a syscall can be decided: a rule, or the default (no condition) after the rules.
struct Decision {
  const std::optional<Condition>* condition = nullptr;  // null or empty: always holds
  std::string_view condition_text;
  Action action;
  SourceLocation where;
};

bool always(const Decision& d) {
  return d.condition == nullptr || !d.condition->has_value();
}

std::size_t baseline_rule_count(const Policy& policy) {
  std::size_t n = 0;
  while (n < policy.rules.size() && policy.rules[n].baseline) ++n;
  return n;
}

// The decisions for `nr` past the baseline, in order, ending at the first that always holds.
std::vector<Decision> decisions(const Policy& policy, std::size_t skip, int nr) {
  std::vector<Decision> list;
  for (std::size_t i = skip; i < policy.rules.size(); ++i) {
    const Rule& rule = policy.rules[i];
    if (rule.syscall != nr) continue;
    list.push_back({&rule.condition, rule.condition_text, rule.action, rule.where});
    if (!rule.condition) return list;
  }
  list.push_back({nullptr, {}, policy.default_action, policy.default_where});
  return list;
}

// The stricter of two decisions. Equal actions are the policy's own (its rule is the one a
// reader looks for), quiet only when both are: a bound's reported refusal stays reported. Two
// different refusals as strict as each other are the bound's.
std::pair<Action, SourceLocation> stricter(const Decision& own, const Decision& bound) {
  const int a = strictness(own.action), b = strictness(bound.action);
  if (a == b && own.action == bound.action) {
    Action action = own.action;
    action.quiet = own.action.quiet && bound.action.quiet;
    return {action, own.where};
  }
  if (a > b) return {own.action, own.where};
  return {bound.action, bound.where};
}

std::string both_texts(std::string_view own, std::string_view bound) {
  if (own.empty()) return std::string(bound);
  if (bound.empty()) return std::string(own);
  return "(" + std::string(own) + ") && (" + std::string(bound) + ")";
}

std::optional<Condition> both_conditions(const Decision& own, const Decision& bound) {
  if (always(own)) return always(bound) ? std::nullopt : std::optional(**bound.condition);
  if (always(bound)) return **own.condition;
  Condition all;
  all.kind = Condition::Kind::all_of;
  all.operands = {**own.condition, **bound.condition};
  return all;
}

}  // namespace

Policy limited_by(Policy own, const Policy& bound) {
  const std::size_t own_baseline = baseline_rule_count(own);
  const std::size_t bound_baseline = baseline_rule_count(bound);
  const Decision own_default{nullptr, {}, own.default_action, own.default_where};
  const Decision bound_default{nullptr, {}, bound.default_action, bound.default_where};
  const auto [default_action, default_where] = stricter(own_default, bound_default);

  std::set<int> named;
  for (std::size_t i = own_baseline; i < own.rules.size(); ++i) named.insert(own.rules[i].syscall);
  for (std::size_t i = bound_baseline; i < bound.rules.size(); ++i)
    named.insert(bound.rules[i].syscall);

  std::vector<Rule> rules(own.rules.begin(),
                          own.rules.begin() + static_cast<std::ptrdiff_t>(own_baseline));
  for (const int nr : named) {
    std::vector<Rule> product;
    for (const Decision& mine : decisions(own, own_baseline, nr)) {
      for (const Decision& theirs : decisions(bound, bound_baseline, nr)) {
        auto [action, where] = stricter(mine, theirs);
        product.push_back(Rule{nr, action, both_conditions(mine, theirs),
                               both_texts(mine.condition_text, theirs.condition_text), where,
                               false});
        if (always(theirs)) break;  // the bound's later decisions are never reached from here
      }
    }
    // The last pair always holds; when it decides as the default does, the default is enough.
    if (!product.empty() && product.back().action == default_action &&
        product.back().action.quiet == default_action.quiet) {
      product.pop_back();
    }
    for (auto& rule : product) rules.push_back(std::move(rule));
  }
  own.rules = std::move(rules);
  own.default_action = default_action;
  own.default_where = default_where;
  for (const auto& source : bound.sources) {
    bool seen = false;
    for (const auto& s : own.sources) seen = seen || s.name == source.name;
    if (!seen) own.sources.push_back(source);
  }
  return own;
}

}  // namespace jail::policy::detail
