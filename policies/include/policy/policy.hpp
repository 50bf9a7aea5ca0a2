// The policy IR: what a parsed and resolved policy file means, independent of its text.
// The evaluator and the BPF compiler both read only this, which is how they stay in agreement.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/diagnostics.hpp"

namespace jail::policy {

enum class ActionKind : std::uint8_t { allow, errno_code, kill, log, trap };

struct Action {
  ActionKind kind = ActionKind::kill;
  std::uint16_t errno_value = 0;  // only for errno_code
  // errno_code only: an expected refusal (clone3's ENOSYS, which makes glibc fall back to clone).
  // The filter answers it in the kernel even when every other refusal goes to the supervisor,
  // so it is neither logged nor counted as a denial.
  bool quiet = false;
  // The decision only: whether a refusal is reported does not change what the tool gets, so a
  // quiet and a loud errno of one value are alike to diff, export and import.
  friend bool operator==(const Action& a, const Action& b) {
    return a.kind == b.kind && a.errno_value == b.errno_value;
  }
};

// "allow", "errno EPERM", "quietly errno ENOSYS", "errno 1234", "kill", "log", "trap".
[[nodiscard]] std::string to_string(const Action& action);

// Whether the call runs: allow, or log (the kernel only records it).
[[nodiscard]] bool lets_run(const Action& action);

enum class CmpOp : std::uint8_t { eq, ne, lt, le, gt, ge };
[[nodiscard]] std::string_view to_string(CmpOp op);

// A condition on the syscall's arguments. Comparisons are unsigned and 64 bits wide:
// (arg[index] & mask) op value. Arguments the kernel reads as 32-bit ints (ioctl's request,
// socket's domain, …) are lowered with mask and value already cut to their low 32 bits, so
// the evaluator and the compiled filter both see what the kernel sees.
struct Condition {
  enum class Kind : std::uint8_t { compare, all_of, any_of };
  Kind kind = Kind::compare;
  int arg = 0;
  std::uint64_t mask = ~std::uint64_t{0};
  CmpOp op = CmpOp::eq;
  std::uint64_t value = 0;
  std::vector<Condition> operands;  // for all_of / any_of
};

struct Rule {
  int syscall = -1;  // x86_64 number
  Action action;
  std::optional<Condition> condition;  // none: always matches
  std::string condition_text;          // as written, for explain and reports
  SourceLocation where;
  // From the shipped baseline every policy starts with: told apart by this, never by the file
  // name, which a policy file of its own may share.
  bool baseline = false;
};

struct SourceFile {
  std::string name;  // as shown in diagnostics: a path as given, or "default.policy"
  std::string text;
};

struct Policy {
  std::string name;  // the top-level file's display name
  Action default_action;
  SourceLocation default_where;
  // All rules in file order with includes expanded in place; the baseline comes first.
  std::vector<Rule> rules;
  std::vector<SourceFile> sources;  // every file read, for lint and diagnostics
  // The display name of the policy its `within` line names ("default.policy"), empty without
  // one. The rules above are already limited by it: no call is decided less strictly than there.
  std::string within;
  SourceLocation within_where;
  std::shared_ptr<const Policy> within_policy;  // that policy, loaded on its own

  // The rules that apply to one syscall, in the order they are tried.
  [[nodiscard]] std::vector<const Rule*> rules_for(int syscall) const;
  // Every syscall number some rule names, ascending.
  [[nodiscard]] std::vector<int> syscalls() const;
};

// Loads a policy by shipped name ("default", "python", "minimal") or by path (anything with a
// '/' or ending in ".policy"). Throws PolicyError carrying every diagnostic found.
[[nodiscard]] Policy load_policy(std::string_view name_or_path);

// Whether the baseline (shipped/baseline.policy) comes before a policy's rules. Every filter
// jail loads has it; `none` reads another runtime's profile as that runtime loads it (the tests
// run jail under Docker's default profile so), never a filter for jail's own tools.
enum class Baseline : std::uint8_t { first, none };

// Parses policy text that is not on disk. Includes resolve against `base_dir` (and shipped
// names). Throws PolicyError.
[[nodiscard]] Policy parse_policy(std::string_view text, std::string_view display_name,
                                  std::string_view base_dir = ".");

// The non-throwing form used by `jail policy check`: all diagnostics, and the policy when
// there were no errors.
struct LoadResult {
  std::optional<Policy> policy;
  std::vector<Diagnostic> diagnostics;
};
[[nodiscard]] LoadResult try_load_policy(std::string_view name_or_path);
[[nodiscard]] LoadResult try_parse_policy(std::string_view text, std::string_view display_name,
                                          std::string_view base_dir = ".",
                                          Baseline baseline = Baseline::first);

// Names of the policies built into the library.
[[nodiscard]] std::vector<std::string> shipped_policy_names();

}  // namespace jail::policy
