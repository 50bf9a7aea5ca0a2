// Lint: what a reviewer should look at twice. Unjustified dangerous allowances are errors
// (a shipped policy must say why); the rest are warnings.
#include <algorithm>
#include <array>
#include <map>

#include "oci_conditions.hpp"
#include "parser.hpp"
#include "policy/syscalls.hpp"
#include "policy/tools.hpp"

namespace jail::policy {
namespace {

// Kernel attack surface and sandbox escape routes: each allowance needs a written reason.
constexpr std::array<std::string_view, 48> kDangerous = {
    "ptrace",
    "bpf",
    "perf_event_open",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "mount_setattr",
    "setns",
    "unshare",
    "keyctl",
    "add_key",
    "request_key",
    "userfaultfd",
    "process_vm_readv",
    "process_vm_writev",
    "open_by_handle_at",
    "name_to_handle_at",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "personality",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "iopl",
    "ioperm",
    "syslog",
    "quotactl",
    "settimeofday",
    "clock_settime",
    "adjtimex",
    "pidfd_getfd",
    "kcmp",
    "lookup_dcookie",
    "vhangup",
};

std::string at(const SourceLocation& w) {
  return w.file + ":" + std::to_string(w.line);
}

bool never_holds(const Condition& c) {
  switch (c.kind) {
    case Condition::Kind::all_of:
      return std::any_of(c.operands.begin(), c.operands.end(), never_holds);
    case Condition::Kind::any_of:
      return std::all_of(c.operands.begin(), c.operands.end(), never_holds);
    case Condition::Kind::compare:
      break;
  }
  // (x & mask) ranges over values ≤ mask, and only values with no bit outside the mask.
  switch (c.op) {
    case CmpOp::eq:
      return (c.value & ~c.mask) != 0;
    case CmpOp::lt:
      return c.value == 0;
    case CmpOp::gt:
      return c.value >= c.mask;
    case CmpOp::ge:
      return c.value > c.mask;
    case CmpOp::ne:
    case CmpOp::le:
      return false;
  }
  return false;
}

// Whether no argument values at all satisfy the condition: its disjunctive form has no
// satisfiable term. Catches what one comparison alone cannot show (arg0 == 1 && arg0 == 2,
// arg0 > 5 && arg0 < 3); a condition too large to expand falls back on never_holds.
bool unsatisfiable(const Condition& c) {
  if (never_holds(c)) return true;
  try {
    return detail::to_dnf(c, false).empty();
  } catch (const detail::InexpressibleCondition&) {
    return false;
  }
}

class Linter {
 public:
  explicit Linter(const Policy& p) : p_(p) {
    for (const auto& s : p.sources) lines_[s.name] = detail::split_lines(s.text);
  }

  std::vector<Diagnostic> run() {
    if (p_.default_action.kind == ActionKind::allow) {
      add(Severity::warning, p_.default_where,
          "'default allow' lets through every syscall not named here, including those future "
          "kernels add: prefer 'default errno EPERM' and allow what the program needs");
    }
    for (int nr : p_.syscalls()) {
      const Rule* decided = nullptr;
      for (const Rule* r : p_.rules_for(nr)) {
        if (decided != nullptr) {
          add(Severity::warning, r->where,
              "this rule for '" + syscall_name(nr) + "' never applies: the unconditional rule at " +
                  at(decided->where) + " decides first");
          continue;
        }
        if (!r->condition) decided = r;
        if (r->condition && unsatisfiable(*r->condition)) {
          add(Severity::warning, r->where,
              "the condition can never hold, so this rule for '" + syscall_name(nr) +
                  "' never applies");
        }
        bool allows = r->action.kind == ActionKind::allow || r->action.kind == ActionKind::log;
        if (allows && is_dangerous_syscall(syscall_name(nr)) && !justified(r->where)) {
          add(Severity::error, r->where,
              "dangerous syscall '" + syscall_name(nr) +
                  "' allowed without a justification comment on the line above");
        }
      }
    }
    std::sort(out_.begin(), out_.end(), [](const Diagnostic& a, const Diagnostic& b) {
      return std::tie(a.where.file, a.where.line, a.where.column) <
             std::tie(b.where.file, b.where.line, b.where.column);
    });
    return out_;
  }

 private:
  // The line above the rule is a comment: the author wrote down why.
  bool justified(const SourceLocation& w) const {
    auto it = lines_.find(w.file);
    if (it == lines_.end() || w.line < 2) return false;
    const std::string& above = it->second[static_cast<std::size_t>(w.line - 2)];
    auto first = above.find_first_not_of(" \t");
    return first != std::string::npos && above[first] == '#';
  }

  void add(Severity s, const SourceLocation& w, std::string message) {
    std::string line;
    auto it = lines_.find(w.file);
    if (it != lines_.end() && w.line >= 1 && static_cast<std::size_t>(w.line) <= it->second.size())
      line = it->second[static_cast<std::size_t>(w.line - 1)];
    out_.push_back(Diagnostic{s, w, std::move(message), std::move(line)});
  }

  const Policy& p_;
  std::map<std::string, std::vector<std::string>> lines_;
  std::vector<Diagnostic> out_;
};

}  // namespace

bool is_dangerous_syscall(std::string_view name) {
  return std::find(kDangerous.begin(), kDangerous.end(), name) != kDangerous.end();
}

std::vector<Diagnostic> lint(const Policy& policy) {
  return Linter(policy).run();
}

}  // namespace jail::policy
