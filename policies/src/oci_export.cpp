// Policy → OCI linux.seccomp. A policy is first-match; libseccomp is not, so each syscall's
// rules are turned into regions — the arguments where rule i decides, i.e. its condition and
// the negation of every earlier rule with another action — and each region is written as
// libseccomp rules (one comparison per argument) whose union is exactly that region.
// Regions of the default action need no rule. Nothing is approximated: what has no exact
// form is refused.
#include <algorithm>
#include <cerrno>
#include <map>

#include "oci_conditions.hpp"
#include "policy/oci.hpp"
#include "policy/syscalls.hpp"

namespace jail::policy {
namespace {

namespace d = detail;
using nlohmann::json;

void put_action(json& j, const Action& a, const char* action_key, const char* errno_key) {
  switch (a.kind) {
    case ActionKind::allow:
      j[action_key] = "SCMP_ACT_ALLOW";
      return;
    case ActionKind::errno_code:
      j[action_key] = "SCMP_ACT_ERRNO";
      j[errno_key] = a.errno_value;
      return;
    case ActionKind::kill:
      j[action_key] = "SCMP_ACT_KILL_PROCESS";
      return;
    case ActionKind::log:
      j[action_key] = "SCMP_ACT_LOG";
      return;
    case ActionKind::trap:
      j[action_key] = "SCMP_ACT_TRAP";
      return;
  }
}

std::string at(const Rule& r) {
  return r.where.file + ":" + std::to_string(r.where.line);
}

struct Piece {
  Action action;
  d::Conjunction region;
  const Rule* rule;
};

// Where each reachable rule of one syscall decides, for the actions other than the default.
std::vector<Piece> pieces_for(const Policy& p, int nr) {
  std::vector<Piece> out;
  std::vector<std::pair<const Rule*, std::vector<d::Conjunction>>> earlier;
  for (const Rule* r : p.rules_for(nr)) {
    try {
      std::vector<d::Conjunction> region =
          r->condition ? d::to_dnf(*r->condition, false) : std::vector<d::Conjunction>{{}};
      // An earlier rule with the same action needs no negation: where it matches, it (or a
      // rule before it) already decides, and the union of the two regions is the same.
      for (const auto& [prev, negation] : earlier)
        if (prev->action != r->action) region = d::conjoin(region, negation);
      if (r->action != p.default_action)
        for (auto& c : region) out.push_back(Piece{r->action, std::move(c), r});
      if (!r->condition) break;
      earlier.emplace_back(r, d::to_dnf(*r->condition, true));
    } catch (const d::InexpressibleCondition& e) {
      throw ExportError(at(*r) + ": the rule for " + syscall_name(nr) +
                        " has no exact OCI form: " + e.what());
    }
  }
  return out;
}

// a ⊆ b as sets of arguments when b's comparisons are a subset of a's.
bool within(const d::Conjunction& a, const d::Conjunction& b) {
  return std::all_of(b.begin(), b.end(), [&](const d::ArgCmp& c) {
    return std::find(a.begin(), a.end(), c) != a.end();
  });
}

// Drops pieces inside another piece of the same action: the union is the same, and each
// piece may cost dozens of libseccomp rules.
std::vector<Piece> without_subsumed(std::vector<Piece> pieces) {
  std::vector<Piece> out;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    bool inside = false;
    for (std::size_t j = 0; j < pieces.size() && !inside; ++j) {
      if (i == j || pieces[i].action != pieces[j].action) continue;
      if (!within(pieces[i].region, pieces[j].region)) continue;
      // Of two equal pieces keep the first.
      inside = !within(pieces[j].region, pieces[i].region) || j < i;
    }
    if (!inside) out.push_back(pieces[i]);
  }
  return out;
}

json args_json(const d::Conjunction& c) {
  json args = json::array();
  for (const auto& a : c) {
    d::OciArg oci = d::to_oci(a);
    json j;
    j["index"] = a.arg;
    j["value"] = oci.value;
    j["valueTwo"] = oci.value_two;
    j["op"] = std::string(d::oci_op_name(oci.op));
    args.push_back(j);
  }
  return args;
}

// A profile's `syscalls`: one entry per action for the syscalls it decides whole, then the
// entries with conditions, in the order they were added.
struct SyscallEntries {
  std::vector<std::pair<Action, std::vector<std::string>>> whole;
  json conditional = json::array();

  void add_whole(const Action& action, const std::string& name) {
    auto slot =
        std::find_if(whole.begin(), whole.end(), [&](const auto& w) { return w.first == action; });
    if (slot == whole.end()) slot = whole.insert(whole.end(), {action, {}});
    slot->second.push_back(name);
  }

  // `put(entry, action)` writes an action in the reader's terms.
  template <class Put>
  json finish(const Put& put) {
    json syscalls = json::array();
    for (const auto& [action, names] : whole) {
      json entry;
      entry["names"] = names;
      put(entry, action);
      syscalls.push_back(std::move(entry));
    }
    for (auto& e : conditional) syscalls.push_back(std::move(e));
    return syscalls;
  }
};

// runsc's answer to each action (see export_runsc_seccomp).
struct RunscActions {
  bool enosys_by_trace = false;

  void put(json& j, const Action& a, const char* action_key, const char* errno_key) const {
    if (a.kind == ActionKind::kill) {
      j[action_key] = "SCMP_ACT_TRAP";
    } else if (a.kind == ActionKind::errno_code && a.errno_value == ENOSYS && enosys_by_trace) {
      j[action_key] = "SCMP_ACT_TRACE";
    } else {
      put_action(j, a, action_key, errno_key);
    }
  }
};

// The names runsc's table gives a syscall (its OCI reader ignores an entry's other names, with
// a warning): gVisor calls 270 and 156 "pselect" and "sysctl". Both names are written, so a
// runsc that learns the usual one still finds it.
json runsc_names(const std::string& name) {
  if (name == "pselect6") return json::array({name, "pselect"});
  if (name == "_sysctl") return json::array({name, "sysctl"});
  return json::array({name});
}

// One syscall's rules in order, as runsc tries entries, without those that change nothing:
// the rules after the first unconditional one; the rules just before it with its action; and
// the last rules when they decide as the default does.
std::vector<const Rule*> ordered_rules(const Policy& policy, int nr) {
  std::vector<const Rule*> rules = policy.rules_for(nr);
  auto unconditional =
      std::find_if(rules.begin(), rules.end(), [](const Rule* r) { return !r->condition; });
  if (unconditional != rules.end()) {
    const Action last = (*unconditional)->action;
    auto first_alike = unconditional;
    while (first_alike != rules.begin() && (*std::prev(first_alike))->action == last) --first_alike;
    rules.erase(std::next(unconditional), rules.end());
    rules.erase(first_alike, unconditional);
  }
  while (!rules.empty() && rules.back()->action == policy.default_action) rules.pop_back();
  return rules;
}

}  // namespace

bool ptrace_can_run(const Policy& policy) {
  const auto runs = [](const Action& a) {
    return a.kind == ActionKind::allow || a.kind == ActionKind::log;
  };
  // The first rule whose condition holds decides: those after an unconditional one never do.
  for (const Rule* rule : policy.rules_for(*syscall_number("ptrace"))) {
    if (runs(rule->action)) return true;
    if (!rule->condition) return false;
  }
  return runs(policy.default_action);
}

json export_runsc_seccomp(const Policy& policy) {
  const RunscActions actions{.enosys_by_trace = !ptrace_can_run(policy)};
  json out;
  actions.put(out, policy.default_action, "defaultAction", "defaultErrnoRet");
  out["architectures"] = json::array({"SCMP_ARCH_X86_64"});
  SyscallEntries entries;
  for (int nr : policy.syscalls()) {
    const std::string name = syscall_name(nr);
    const std::vector<const Rule*> rules = ordered_rules(policy, nr);
    if (rules.size() == 1 && !rules.front()->condition) {
      for (const auto& alias : runsc_names(name))
        entries.add_whole(rules.front()->action, alias.get<std::string>());
      continue;
    }
    for (const Rule* rule : rules) {
      std::vector<d::Conjunction> pieces{{}};
      try {
        if (rule->condition) {
          pieces.clear();
          for (const auto& term : d::to_dnf(*rule->condition, false))
            for (auto& piece : d::as_seccomp_rules(term, d::Ranges::as_written))
              pieces.push_back(std::move(piece));
        }
      } catch (const d::InexpressibleCondition& e) {
        throw ExportError(at(*rule) + ": the rule for " + name +
                          " has no exact OCI form: " + e.what());
      }
      for (const auto& piece : pieces) {
        json entry;
        entry["names"] = runsc_names(name);
        actions.put(entry, rule->action, "action", "errnoRet");
        if (!piece.empty()) entry["args"] = args_json(piece);
        entries.conditional.push_back(std::move(entry));
      }
    }
  }
  out["syscalls"] = entries.finish(
      [&](json& entry, const Action& action) { actions.put(entry, action, "action", "errnoRet"); });
  return out;
}

json export_oci_seccomp(const Policy& policy) {
  json out;
  put_action(out, policy.default_action, "defaultAction", "defaultErrnoRet");
  // Native only, as the jail runs: libseccomp applies the runtime's bad-architecture action
  // to other architectures.
  out["architectures"] = json::array({"SCMP_ARCH_X86_64"});
  SyscallEntries entries;
  for (int nr : policy.syscalls()) {
    std::string name = syscall_name(nr);
    std::vector<Piece> pieces = without_subsumed(pieces_for(policy, nr));
    auto everything = std::find_if(pieces.begin(), pieces.end(),
                                   [](const Piece& piece) { return piece.region.empty(); });
    if (everything != pieces.end()) {
      // Only possible when no earlier rule had another action, so this one action is all.
      for (const auto& piece : pieces)
        if (piece.action != everything->action)
          throw ExportError(at(*piece.rule) + ": " + name +
                            ": an unconditional rule next to another action (a bug in export)");
      entries.add_whole(everything->action, name);
      continue;
    }
    for (const auto& piece : pieces) {
      std::vector<d::Conjunction> rules;
      try {
        rules = d::as_seccomp_rules(piece.region, d::Ranges::as_masked_blocks);
      } catch (const d::InexpressibleCondition& e) {
        throw ExportError(at(*piece.rule) + ": the rule for " + name +
                          " has no exact OCI form: " + e.what());
      }
      for (const auto& r : rules) {
        json entry;
        entry["names"] = json::array({name});
        put_action(entry, piece.action, "action", "errnoRet");
        entry["args"] = args_json(r);
        entry["comment"] = "from " + at(*piece.rule);
        entries.conditional.push_back(std::move(entry));
      }
    }
  }
  out["syscalls"] = entries.finish(
      [](json& entry, const Action& action) { put_action(entry, action, "action", "errnoRet"); });
  return out;
}

}  // namespace jail::policy
