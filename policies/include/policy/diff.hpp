// What changes between two policies, syscall by syscall: the review of a policy change, and
// the CI gate "does this change allow anything that was refused before?".
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "policy/policy.hpp"

namespace jail::policy {

// How strict an action is, for deciding whether a change widens a policy:
// kill (4) > trap (3) > errno (2) > log (1) > allow (0). `log` lets the call run (the kernel
// only records it), so it sits just above allow; every errno value is equally strict.
[[nodiscard]] int strictness(const Action& action);

// wider: AFTER is less strict than BEFORE for some arguments and nowhere stricter; narrower:
// the reverse; mixed: both; changed: equally strict everywhere but another action somewhere
// (another errno); restated: the rules differ but no tested argument is decided differently
// (only listed when the test was not exhaustive — bit masks; otherwise the syscall is left out).
enum class Change : std::uint8_t { wider, narrower, mixed, changed, restated };
[[nodiscard]] std::string_view to_string(Change change);

// One rule as it bears on the diff; `where` is empty for the policy's default.
struct RuleLine {
  std::string action;
  std::optional<std::string> condition;  // as written
  std::optional<SourceLocation> where;
};

// Argument values at which the two policies decide differently, and what each decides.
struct Example {
  std::vector<std::pair<int, std::uint64_t>> args;  // (index, value) of the arguments tested
  Action before, after;
};

struct SyscallChange {
  std::string syscall;
  int nr = -1;
  Change change = Change::changed;
  // The rules that decide it, in order, ending with the default when rules can fall through.
  std::vector<RuleLine> before, after;
  // The first argument values found where AFTER is less strict / stricter / only other.
  std::optional<Example> widened, narrowed, other;
  // The first where AFTER lets the call run (allow or log) and BEFORE did not. Not always
  // `widened`: that may be kill → errno at one value while another value now runs.
  std::optional<Example> runs_now;
};

struct PolicyDiff {
  std::string before_name, after_name;
  std::optional<Action> default_before, default_after;  // set when the default changed
  std::vector<SyscallChange> syscalls;
  [[nodiscard]] bool empty() const { return !default_before && syscalls.empty(); }
  // AFTER allows a call or argument value BEFORE refused, or answers something less strictly.
  [[nodiscard]] bool wider() const;
  [[nodiscard]] bool narrower() const;
};

// Compares decisions, not text: each syscall whose rules differ (in lowered form, so a constant
// spelled as a number or a rule moved into an include is no change) is evaluated under both
// policies at every boundary of every comparison either policy makes on it — value-1, value,
// value+1, the masked bits set and cleared, and combinations of flag masks. For comparisons of
// whole values that is every region of the argument space, so `wider` is exact; for bit masks
// it covers the bit patterns the policies name and their unions.
[[nodiscard]] PolicyDiff diff(const Policy& before, const Policy& after);

// A table: syscall, change, the rules before and after, and an example for each direction.
[[nodiscard]] std::string diff_text(const PolicyDiff& d);
// {"before", "after", "wider", "narrower", "default", "syscalls": [...]}; see LANGUAGE.md.
[[nodiscard]] nlohmann::json diff_json(const PolicyDiff& d);
// The pieces both the table and the summary print: "default: A → B  (…)\n" (empty when the
// default is the same), the closing "AFTER is WIDER than BEFORE: …\n", and the JSON "default".
[[nodiscard]] std::string diff_default_text(const PolicyDiff& d);
[[nodiscard]] std::string diff_verdict_text(const PolicyDiff& d);
[[nodiscard]] nlohmann::json diff_default_json(const PolicyDiff& d);

}  // namespace jail::policy
