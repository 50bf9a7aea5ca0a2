#include "policy/diff.hpp"

#include <set>

#include "policy/syscalls.hpp"

namespace jail::policy {
namespace {

bool same(const Condition& a, const Condition& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == Condition::Kind::compare)
    return a.arg == b.arg && a.mask == b.mask && a.op == b.op && a.value == b.value;
  if (a.operands.size() != b.operands.size()) return false;
  for (std::size_t i = 0; i < a.operands.size(); ++i)
    if (!same(a.operands[i], b.operands[i])) return false;
  return true;
}

// The reachable rules for one syscall: up to and including the first unconditional one.
std::vector<const Rule*> deciding(const Policy& p, int nr) {
  std::vector<const Rule*> out;
  for (const Rule* r : p.rules_for(nr)) {
    out.push_back(r);
    if (!r->condition) break;
  }
  return out;
}

bool same_decisions(const Policy& a, const Policy& b, int nr) {
  auto ra = deciding(a, nr), rb = deciding(b, nr);
  if (ra.size() != rb.size()) return false;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    if (ra[i]->action != rb[i]->action) return false;
    if (ra[i]->condition.has_value() != rb[i]->condition.has_value()) return false;
    if (ra[i]->condition && !same(*ra[i]->condition, *rb[i]->condition)) return false;
  }
  bool falls_through = ra.empty() || ra.back()->condition;
  return !falls_through || a.default_action == b.default_action;
}

std::vector<std::string> describe(const Policy& p, int nr) {
  std::vector<std::string> out;
  auto rules = deciding(p, nr);
  for (const Rule* r : rules) {
    std::string line = to_string(r->action);
    if (r->condition) line += " if " + r->condition_text;
    out.push_back(line + "  (" + r->where.file + ":" + std::to_string(r->where.line) + ")");
  }
  if (rules.empty() || rules.back()->condition)
    out.push_back("otherwise " + to_string(p.default_action) + "  (default)");
  return out;
}

}  // namespace

PolicyDiff diff(const Policy& before, const Policy& after) {
  PolicyDiff d;
  if (before.default_action != after.default_action) {
    d.default_before = to_string(before.default_action);
    d.default_after = to_string(after.default_action);
  }
  std::set<int> nrs;
  for (int nr : before.syscalls()) nrs.insert(nr);
  for (int nr : after.syscalls()) nrs.insert(nr);
  for (int nr : nrs) {
    if (same_decisions(before, after, nr)) continue;
    d.syscalls.push_back(
        SyscallChange{syscall_name(nr), nr, describe(before, nr), describe(after, nr)});
  }
  return d;
}

std::string diff_text(const PolicyDiff& d) {
  std::string out;
  if (d.default_before) {
    out += "default: " + *d.default_before + " → " + *d.default_after +
           " (every syscall neither policy names)\n";
  }
  for (const auto& c : d.syscalls) {
    out += c.syscall + ":\n";
    for (const auto& l : c.before) out += "  - " + l + "\n";
    for (const auto& l : c.after) out += "  + " + l + "\n";
  }
  return out;
}

}  // namespace jail::policy
