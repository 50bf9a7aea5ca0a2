#include "policy/diff.hpp"

#include <set>

#include "diff_points.hpp"
#include "policy/evaluate.hpp"
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

bool falls_through(const std::vector<const Rule*>& rules) {
  return rules.empty() || rules.back()->condition;
}

bool same_rules(const std::vector<const Rule*>& ra, const Action& da,
                const std::vector<const Rule*>& rb, const Action& db) {
  if (ra.size() != rb.size()) return false;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    if (ra[i]->action != rb[i]->action) return false;
    if (ra[i]->condition.has_value() != rb[i]->condition.has_value()) return false;
    if (ra[i]->condition && !same(*ra[i]->condition, *rb[i]->condition)) return false;
  }
  return !falls_through(ra) || da == db;
}

std::vector<RuleLine> lines(const std::vector<const Rule*>& rules, const Action& default_action) {
  std::vector<RuleLine> out;
  for (const Rule* r : rules) {
    std::optional<std::string> condition;
    if (r->condition) condition = r->condition_text;
    out.push_back(RuleLine{to_string(r->action), condition, r->where});
  }
  if (falls_through(rules)) out.push_back(RuleLine{to_string(default_action), std::nullopt, {}});
  return out;
}

Change classify(bool wider, bool narrower, bool other) {
  if (wider && narrower) return Change::mixed;
  if (wider) return Change::wider;
  if (narrower) return Change::narrower;
  return other ? Change::changed : Change::restated;
}

// Walks every combination of boundary values (an odometer over the tested arguments) and
// keeps the first example of each kind of difference. Nothing when the rules differ only in
// how they are written and the test was exact.
std::optional<SyscallChange> compare(const Policy& before, const Policy& after, int nr,
                                     const std::vector<const Rule*>& ra,
                                     const std::vector<const Rule*>& rb) {
  SyscallChange c{syscall_name(nr),
                  nr,
                  Change::restated,
                  lines(ra, before.default_action),
                  lines(rb, after.default_action),
                  {},
                  {},
                  {},
                  {}};
  detail::ArgPoints points = detail::boundary_points(ra, rb);
  // Keeps the first example of each kind of difference, showing the arguments the conditions
  // read and any other a witness set.
  auto consider = [&](const std::uint64_t(&args)[6]) {
    const Action& a = decide(ra, before.default_action, args);
    const Action& b = decide(rb, after.default_action, args);
    if (a == b) return;
    int sa = strictness(a), sb = strictness(b);
    std::optional<Example>& slot = sb < sa ? c.widened : sb > sa ? c.narrowed : c.other;
    const bool starts_running = lets_run(b) && !lets_run(a);
    if (slot && (!starts_running || c.runs_now)) return;
    Example e{{}, a, b};
    for (int index = 0; index < 6; ++index)
      if (args[index] != 0 || std::count(points.indexes.begin(), points.indexes.end(), index))
        e.args.emplace_back(index, args[index]);
    if (starts_running && !c.runs_now) c.runs_now = e;
    if (!slot) slot = std::move(e);
  };
  std::vector<std::size_t> at(points.indexes.size(), 0);
  std::uint64_t args[6] = {0, 0, 0, 0, 0, 0};
  for (;;) {
    for (std::size_t i = 0; i < at.size(); ++i) args[points.indexes[i]] = points.values[i][at[i]];
    consider(args);
    std::size_t i = 0;
    while (i < at.size() && ++at[i] == points.values[i].size()) at[i++] = 0;
    if (i == at.size()) break;
  }
  // And one point in each region where the two decide differently, worked out exactly: the
  // boundary points can step over such a region when masks cross.
  const std::optional<std::vector<detail::Args>> witnesses =
      detail::disagreement_witnesses(ra, before.default_action, rb, after.default_action);
  for (const detail::Args& w : witnesses.value_or(std::vector<detail::Args>{})) {
    for (std::size_t i = 0; i < 6; ++i) args[i] = w[i];
    consider(args);
  }
  c.change = classify(c.widened.has_value(), c.narrowed.has_value(), c.other.has_value());
  const bool exact = points.exact || witnesses.has_value();
  if (c.change == Change::restated && exact) return std::nullopt;
  return c;
}

}  // namespace

int strictness(const Action& action) {
  switch (action.kind) {
    case ActionKind::allow:
      return 0;
    case ActionKind::log:
      return 1;
    case ActionKind::errno_code:
      return 2;
    case ActionKind::trap:
      return 3;
    case ActionKind::kill:
      return 4;
  }
  return 4;
}

std::string_view to_string(Change change) {
  switch (change) {
    case Change::wider:
      return "wider";
    case Change::narrower:
      return "narrower";
    case Change::mixed:
      return "mixed";
    case Change::changed:
      return "changed";
    case Change::restated:
      return "restated";
  }
  return "changed";
}

bool PolicyDiff::wider() const {
  if (default_before && strictness(*default_after) < strictness(*default_before)) return true;
  for (const auto& c : syscalls)
    if (c.widened) return true;
  return false;
}

bool PolicyDiff::narrower() const {
  if (default_before && strictness(*default_after) > strictness(*default_before)) return true;
  for (const auto& c : syscalls)
    if (c.narrowed) return true;
  return false;
}

PolicyDiff diff(const Policy& before, const Policy& after) {
  PolicyDiff d;
  d.before_name = before.name;
  d.after_name = after.name;
  if (before.default_action != after.default_action) {
    d.default_before = before.default_action;
    d.default_after = after.default_action;
  }
  std::set<int> nrs;
  for (int nr : before.syscalls()) nrs.insert(nr);
  for (int nr : after.syscalls()) nrs.insert(nr);
  for (int nr : nrs) {
    auto ra = deciding(before, nr), rb = deciding(after, nr);
    if (same_rules(ra, before.default_action, rb, after.default_action)) continue;
    if (auto c = compare(before, after, nr, ra, rb)) d.syscalls.push_back(std::move(*c));
  }
  return d;
}

}  // namespace jail::policy
