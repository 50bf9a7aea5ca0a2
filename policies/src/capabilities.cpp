// What a policy lets a tool do, category by category: each syscall is allowed whatever its
// arguments, allowed only on some, or refused, read off its reachable rules and the default.
#include <algorithm>

#include "policy/capabilities.hpp"
#include "policy/diff.hpp"
#include "policy/syscalls.hpp"

namespace jail::policy {
namespace {

// The rules that can decide: up to and including the first unconditional one.
std::vector<const Rule*> reachable(const Policy& p, int nr) {
  std::vector<const Rule*> out;
  for (const Rule* r : p.rules_for(nr)) {
    out.push_back(r);
    if (!r->condition) break;
  }
  return out;
}

void classify(const Policy& p, const std::string& name, CategoryCapabilities& row) {
  const std::optional<int> nr = syscall_number(name);
  if (!nr) return;
  const std::vector<const Rule*> rules = reachable(p, *nr);
  const bool falls_through = rules.empty() || rules.back()->condition;
  std::vector<Action> outcomes;
  for (const Rule* r : rules) outcomes.push_back(r->action);
  if (falls_through) outcomes.push_back(p.default_action);

  const auto runs = std::count_if(outcomes.begin(), outcomes.end(), lets_run);
  if (runs == static_cast<std::ptrdiff_t>(outcomes.size())) {
    row.allowed.push_back(name);
  } else if (runs == 0) {
    // Strictest first: "kill or errno EPERM".
    std::sort(outcomes.begin(), outcomes.end(),
              [](const Action& a, const Action& b) { return strictness(a) > strictness(b); });
    std::string how;
    for (std::size_t i = 0; i < outcomes.size(); ++i)
      if (i == 0 || !(outcomes[i] == outcomes[i - 1]))
        how += (how.empty() ? "" : " or ") + to_string(outcomes[i]);
    auto group = std::find_if(row.refused.begin(), row.refused.end(),
                              [&](const RefusedSyscalls& g) { return g.how == how; });
    if (group == row.refused.end()) group = row.refused.insert(row.refused.end(), {how, {}});
    group->syscalls.push_back(name);
  } else {
    std::vector<std::string> text;
    for (const Rule* r : rules)
      text.push_back(r->condition ? to_string(r->action) + " if " + r->condition_text
                                  : "otherwise " + to_string(r->action));
    if (falls_through) text.push_back("otherwise " + to_string(p.default_action));
    row.conditional.push_back(ConditionalSyscall{name, std::move(text)});
  }
}

}  // namespace

bool Probe::runs() const {
  return reach != Answer::no;
}

bool Need::met() const {
  return std::any_of(alternatives.begin(), alternatives.end(),
                     [](const Probe& p) { return p.runs(); });
}

std::string_view to_string(Answer answer) {
  switch (answer) {
    case Answer::yes:
      return "yes";
    case Answer::partly:
      return "partly";
    case Answer::no:
      return "no";
  }
  return "no";
}

Capabilities capabilities(const Policy& policy) {
  Capabilities out{policy.name, policy.default_action, {}, answer_questions(policy)};
  for (Category category : kCategories) {
    CategoryCapabilities row{category, {}, {}, {}};
    for (const std::string& name : syscalls_in(category)) classify(policy, name, row);
    out.categories.push_back(std::move(row));
  }
  return out;
}

}  // namespace jail::policy
