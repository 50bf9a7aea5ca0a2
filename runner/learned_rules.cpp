#include "learned_rules.hpp"

#include <linux/audit.h>
#include <linux/seccomp.h>

#include <algorithm>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "policy/constants.hpp"
#include "policy/evaluate.hpp"
#include "policy/learn_conditions.hpp"
#include "policy/learn_families.hpp"
#include "policy/syscalls.hpp"
#include "policy/tools.hpp"
#include "policy/value_names.hpp"

namespace jail::runner {
namespace {

// What jail itself needs under the filter (see launch), and exit_group, which learning allows
// plainly (so never sees) and every tool ends with: always allowed, written in this order.
const std::vector<std::string_view> kNeededByJail = {"execve", "write", "exit", "exit_group"};

// The supervisor keeps this many distinct argument sets of a syscall and counts the rest
// (kKeptArgumentSets in jail/src/seccomp/denials.cpp). A syscall with that many may have been
// called with others no one kept: its values are not all known.
constexpr std::size_t kArgumentSetsKept = 64;

bool needed_by_jail(std::string_view name) {
  return std::find(kNeededByJail.begin(), kNeededByJail.end(), name) != kNeededByJail.end();
}

seccomp_data call_of(int nr, const std::array<std::uint64_t, 6>& args) {
  seccomp_data data{};
  data.nr = nr;
  data.arch = AUDIT_ARCH_X86_64;
  for (std::size_t i = 0; i < args.size(); ++i) data.args[i] = args[i];
  return data;
}

// The baseline's rules come first in every policy, the learned one too: what they refuse (a
// set-id mode, a namespace flag) is refused either way, so they are passed over here.

// Whether `p` lets `nr` run whatever its arguments (past the baseline).
bool allows_always(const policy::Policy& p, int nr) {
  for (const policy::Rule* rule : p.rules_for(nr)) {
    if (rule->baseline) continue;
    if (!policy::lets_run(rule->action)) return false;
    if (!rule->condition) return true;
  }
  return policy::lets_run(p.default_action);
}

// Whether `p` lets `nr` run for some arguments.
bool may_allow(const policy::Policy& p, int nr) {
  for (const policy::Rule* rule : p.rules_for(nr)) {
    if (rule->baseline) continue;
    if (policy::lets_run(rule->action)) return true;
    if (!rule->condition) return false;
  }
  return policy::lets_run(p.default_action);
}

// The arguments of a call with `value` in the argument that matters, the others as the run gave
// them first: what a rule on that value is tested with.
std::array<std::uint64_t, 6> with_value(const SyscallUse& use, int arg, std::uint64_t value) {
  std::array<std::uint64_t, 6> args{};
  if (!use.distinct_args.empty()) args = use.distinct_args.front();
  args[static_cast<std::size_t>(arg)] = value;
  return args;
}

// Whether `p` lets `nr` run with `value` in argument `arg` and the others 0.
bool allows_at(const policy::Policy& p, int nr, int arg, std::uint64_t value) {
  std::array<std::uint64_t, 6> args{};
  args[static_cast<std::size_t>(arg)] = value;
  return policy::lets_run(policy::evaluate(p, call_of(nr, args)).action);
}

bool allows_value(const policy::Policy& p, const SyscallUse& use, int arg, std::uint64_t value) {
  return policy::lets_run(
      policy::evaluate(p, call_of(use.number, with_value(use, arg, value))).action);
}

std::string names_of(std::string_view syscall, int arg, const std::vector<std::uint64_t>& values) {
  std::vector<std::string> names;
  for (const auto value : std::set<std::uint64_t>(values.begin(), values.end())) {
    names.push_back(policy::value_text(syscall, arg, value));
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string flag_condition(const policy::FamilyMember& member, int arg) {
  return fmt::format("(arg{} & {}) == {}", arg, member.flag, member.flag_set ? member.flag : "0");
}

// Plain names, eight to a line.
std::string allow_lines(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); i += 8) {
    const auto end = names.begin() + static_cast<std::ptrdiff_t>(std::min(names.size(), i + 8));
    text += fmt::format("allow {}\n",
                        fmt::join(names.begin() + static_cast<std::ptrdiff_t>(i), end, " "));
  }
  return text;
}

// `text` as comment lines of at most 100 columns, broken between words.
std::string comment(const std::string& text) {
  constexpr std::size_t kWidth = 100;
  std::string out, line = "#";
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find(' ', start), text.size());
    const std::string word = text.substr(start, end - start);
    if (line.size() + 1 + word.size() > kWidth && line != "#") {
      out += line + "\n";
      line = "#";
    }
    line += " " + word;
    start = end + 1;
  }
  return out + line + "\n";
}

class RulesWriter {
 public:
  RulesWriter(const std::vector<SyscallUse>& seen, const RulesRequest& request)
      : seen_(seen), request_(request) {}

  std::string text() {
    std::string out;
    std::vector<std::string> own;
    for (const auto name : kNeededByJail) {
      const int nr = policy::syscall_number(name).value_or(-1);
      if (wanted(nr)) own.emplace_back(name);
    }
    if (!own.empty()) {
      out += "# needed by jail to start the tool and to report a failed start\n" + allow_lines(own);
    }
    if (!request_.strict) {
      for (const auto& family : policy::learn_families()) {
        if (const std::string block = family_block(family); !block.empty()) {
          out += "\n" + block;
        }
      }
    }
    out += samples();
    return out;
  }

 private:
  // Whether a rule allowing `nr` would change anything: the bound lets it run somewhere and
  // the policy being widened does not let it run everywhere already.
  bool wanted(int nr) const {
    if (nr < 0) return false;
    if (request_.bound != nullptr && !may_allow(*request_.bound, nr)) return false;
    return request_.already == nullptr || !allows_always(*request_.already, nr);
  }

  const SyscallUse* use_of(std::string_view name) const {
    for (const auto& use : seen_) {
      if (use.name == name) return &use;
    }
    return nullptr;
  }

  // The values of `use` a member covers.
  static std::vector<std::uint64_t> covered(const policy::FamilyMember& member,
                                            const SyscallUse& use) {
    std::vector<std::uint64_t> values;
    for (const auto v : use.condition_values) {
      if (policy::covers(member, v)) values.push_back(v);
    }
    return values;
  }

  // What the run did that brings `family` in, for its comment; empty when it did nothing.
  std::vector<std::string> triggers(const policy::LearnFamily& family) const {
    std::vector<std::string> used;
    for (const auto& member : family.members) {
      const SyscallUse* use = use_of(member.syscall);
      if (!member.triggers || use == nullptr) continue;
      const std::optional<int> arg = policy::learned_condition_argument(member.syscall);
      if (!arg || (member.values.empty() && member.flag.empty())) {
        used.emplace_back(member.syscall);
        continue;
      }
      const std::vector<std::uint64_t> values = covered(member, *use);
      if (!values.empty()) {
        used.push_back(fmt::format("{}({})", member.syscall,
                                   policy::value_text(member.syscall, *arg, values.front())));
      }
    }
    return used;
  }

  // In a merge: whether the policy widened lets the calls of `nr` the member stands for run
  // already (those the run made, or the flag's own value when it made none).
  bool already_allows_flag(const policy::FamilyMember& member, int nr, int arg) const {
    if (request_.already == nullptr) return false;
    const SyscallUse* use = use_of(member.syscall);
    std::vector<std::uint64_t> values =
        use == nullptr ? std::vector<std::uint64_t>{} : covered(member, *use);
    if (values.empty()) {
      values.push_back(member.flag_set ? policy::constant_value(member.flag).value_or(0) : 0);
    }
    return std::all_of(values.begin(), values.end(),
                       [&](std::uint64_t v) { return allows_at(*request_.already, nr, arg, v); });
  }

  // The member's values the policy widened does not let run yet (all of them in a new policy).
  std::vector<std::string_view> not_yet_allowed(const policy::FamilyMember& member, int nr,
                                                int arg) const {
    std::vector<std::string_view> values;
    for (const auto name : member.values) {
      const std::uint64_t v = policy::constant_value(name).value_or(0);
      if (request_.already == nullptr || !allows_at(*request_.already, nr, arg, v)) {
        values.push_back(name);
      }
    }
    return values;
  }

  std::string family_block(const policy::LearnFamily& family) {
    const std::vector<std::string> used = triggers(family);
    if (used.empty() && !family.always) return {};
    std::vector<std::string> plain;
    std::string conditional;
    for (const auto& member : family.members) {
      const int nr = policy::syscall_number(member.syscall).value_or(-1);
      if (needed_by_jail(member.syscall) || !wanted(nr)) continue;
      const std::optional<int> arg = policy::learned_condition_argument(member.syscall);
      if (!arg || (member.values.empty() && member.flag.empty())) {
        plain.emplace_back(member.syscall);
        plain_.insert(std::string(member.syscall));
      } else if (!member.flag.empty()) {
        if (already_allows_flag(member, nr, *arg)) continue;
        conditional +=
            fmt::format("allow {} if {}\n", member.syscall, flag_condition(member, *arg));
        members_.push_back(&member);
      } else {
        const std::vector<std::string_view> values = not_yet_allowed(member, nr, *arg);
        if (values.empty()) continue;
        conditional += fmt::format("allow {} if arg{} in {{{}}}\n", member.syscall, *arg,
                                   fmt::join(values, ", "));
        members_.push_back(&member);
      }
    }
    if (plain.empty() && conditional.empty()) return {};
    const std::string reason = used.empty() ? std::string("allowed to every tool")
                                            : fmt::format("the run used {}", fmt::join(used, ", "));
    return comment(fmt::format("family \"{}\": {} ({})", family.name, family.why, reason)) +
           allow_lines(plain) + conditional;
  }

  // The values of `use` no family written here covers and the policy widened does not allow.
  std::vector<std::uint64_t> uncovered(const SyscallUse& use, int arg) const {
    std::vector<std::uint64_t> values;
    for (const auto v : use.condition_values) {
      const bool in_family =
          std::any_of(members_.begin(), members_.end(), [&](const policy::FamilyMember* m) {
            return m->syscall == use.name && policy::covers(*m, v);
          });
      const bool allowed =
          request_.already != nullptr && allows_value(*request_.already, use, arg, v);
      if (!in_family && !allowed) values.push_back(v);
    }
    return values;
  }

  std::string samples() const {
    std::vector<std::string> plain;
    std::string conditional, dangerous, unknown;
    for (const auto& use : seen_) {
      if (needed_by_jail(use.name) || plain_.count(use.name) != 0) continue;
      // A number no table knows has no name a rule could use: said, never allowed.
      if (use.name.starts_with("syscall_")) {
        unknown += fmt::format("#   {} ({})\n", use.number, counted(use.count, "call", "calls"));
        continue;
      }
      if (!wanted(use.number)) continue;
      if (request_.already != nullptr && allows_use(*request_.already, use)) continue;
      std::string rule = fmt::format("allow {}", use.name);
      const std::optional<int> arg = policy::learned_condition_argument(use.name);
      if (arg) {
        const std::vector<std::uint64_t> values = uncovered(use, *arg);
        if (values.empty() && !use.more_condition_values) continue;
        // Never an unconditional allow because the tool sprayed values: those kept, marked.
        const std::string review =
            use.more_condition_values
                ? fmt::format(
                      "# REVIEW: {} was called with more than {} distinct arg{} values; only "
                      "those kept are allowed, never the rest\n",
                      use.name, policy::kKeptConditionValues, *arg)
                : "";
        rule = fmt::format("{}allow {} if arg{} in {{{}}}", review, use.name, *arg,
                           names_of(use.name, *arg, values));
      }
      if (policy::is_dangerous_syscall(use.name)) {
        dangerous += fmt::format(
            "# REVIEW: {} is dangerous; the learning run used it {}. Remove this rule unless "
            "the tool truly needs it.\n{}\n",
            use.name, use.count == 1 ? std::string("once") : counted(use.count, "time", "times"),
            rule);
      } else if (arg) {
        conditional += fmt::format("# {}: {}, these values seen\n{}\n", use.name,
                                   counted(use.count, "call", "calls"), rule);
      } else {
        plain.push_back(use.name);
      }
    }
    std::string text;
    if (!plain.empty()) text += "\n# seen in the learning run, in no family\n" + allow_lines(plain);
    if (!conditional.empty()) text += "\n" + conditional;
    if (!dangerous.empty()) text += "\n" + dangerous;
    if (!unknown.empty()) {
      text +=
          "\n# The run called syscall numbers no x86_64 table of this jail knows; they are not "
          "allowed\n# (the default answers them):\n" +
          unknown;
    }
    return text;
  }

  const std::vector<SyscallUse>& seen_;
  const RulesRequest& request_;
  std::set<std::string> plain_;                       // allowed whole by a family block
  std::vector<const policy::FamilyMember*> members_;  // conditional members written
};

}  // namespace

std::string counted(std::uint64_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

bool allows_use(const policy::Policy& p, const SyscallUse& use) {
  if (allows_always(p, use.number)) return true;
  for (const auto& args : use.distinct_args) {
    if (!policy::lets_run(policy::evaluate(p, call_of(use.number, args)).action)) return false;
  }
  const std::optional<int> arg = policy::learned_condition_argument(use.name);
  if (!arg) return use.distinct_args.size() < kArgumentSetsKept;
  if (use.more_condition_values) return false;
  return std::all_of(use.condition_values.begin(), use.condition_values.end(),
                     [&](std::uint64_t v) { return allows_value(p, use, *arg, v); });
}

std::string learned_rules(const std::vector<SyscallUse>& seen, const RulesRequest& request) {
  return RulesWriter(seen, request).text();
}

std::vector<std::string> refused_by(const policy::Policy& limit,
                                    const std::vector<SyscallUse>& seen) {
  std::vector<std::string> lines;
  for (const auto& use : seen) {
    if (use.number < 0 || use.name.starts_with("syscall_")) continue;
    std::optional<policy::Decision> refusal;
    for (const auto& args : use.distinct_args) {
      const policy::Decision d = policy::evaluate(limit, call_of(use.number, args));
      if (!policy::lets_run(d.action)) refusal = d;
      if (refusal) break;
    }
    const std::optional<int> arg = policy::learned_condition_argument(use.name);
    for (std::size_t i = 0; arg && !refusal && i < use.condition_values.size(); ++i) {
      const policy::Decision d = policy::evaluate(
          limit, call_of(use.number, with_value(use, *arg, use.condition_values[i])));
      if (!policy::lets_run(d.action)) refusal = d;
    }
    if (!refusal) continue;
    lines.push_back(fmt::format(
        "{} ({}): {} answers it with {}", use.name, counted(use.count, "call", "calls"),
        refusal->by_default ? limit.name + "'s default"
                            : fmt::format("{}:{}", refusal->where.file, refusal->where.line),
        policy::to_string(refusal->action)));
  }
  return lines;
}

}  // namespace jail::runner
