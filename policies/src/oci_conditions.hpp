// libseccomp's view of argument conditions, shared by OCI import and export: one comparison
// per argument per rule (libseccomp refuses a second one with EINVAL), rules of one syscall
// ORed. Everything here is exact: no approximations, so a refusal is the only way out.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.hpp"

namespace jail::policy::detail {

enum class OciOp : std::uint8_t { ne, lt, le, eq, ge, gt, masked_eq };

[[nodiscard]] std::string_view oci_op_name(OciOp op);  // "SCMP_CMP_EQ"
[[nodiscard]] std::optional<OciOp> parse_oci_op(std::string_view name);

// (arg & mask) op value, unsigned and 64 bits wide: the policy IR's comparison. libseccomp
// writes it directly when mask is all ones (SCMP_CMP_<op>) or op is == (SCMP_CMP_MASKED_EQ);
// the other forms are kept whole until they are written out, so negations stay small.
struct ArgCmp {
  int arg = 0;
  std::uint64_t mask = ~std::uint64_t{0};
  CmpOp op = CmpOp::eq;
  std::uint64_t value = 0;
  friend bool operator==(const ArgCmp&, const ArgCmp&) = default;
};

// A comparison as an OCI args entry reads it: masked_eq is (arg & value) == value_two.
[[nodiscard]] ArgCmp from_oci(int arg, OciOp op, std::uint64_t value, std::uint64_t value_two);
struct OciArg {
  OciOp op;
  std::uint64_t value, value_two;
};
// Only for comparisons libseccomp writes directly (see ArgCmp).
[[nodiscard]] OciArg to_oci(const ArgCmp& c);

// Comparisons that must all hold; the empty one always holds.
using Conjunction = std::vector<ArgCmp>;

[[nodiscard]] bool holds(const ArgCmp& c, std::uint64_t x);
// Whether some argument vector satisfies every comparison (decided exactly, not sampled).
[[nodiscard]] bool satisfiable(const Conjunction& c);

// Thrown when a condition has no exact libseccomp form, or the form would be too large.
class InexpressibleCondition : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A policy condition (or its negation) as a union of conjunctions, unsatisfiable ones dropped.
[[nodiscard]] std::vector<Conjunction> to_dnf(const Condition& c, bool negate);
// a ∧ b, distributed; unsatisfiable products dropped.
[[nodiscard]] std::vector<Conjunction> conjoin(const std::vector<Conjunction>& a,
                                               const std::vector<Conjunction>& b);

// How a range of one argument is written. libseccomp 2.5.4 (Debian 12's, which runc and crun
// link) mis-enforces, or never returns from seccomp_rule_add on, several rules of one syscall
// that compare the same argument with LT/LE/GT/GE; written as MASKED_EQ blocks it is exact.
// gVisor reads ranges as written.
enum class Ranges { as_written, as_masked_blocks };

// One conjunction rewritten as rules libseccomp accepts (at most one comparison per
// argument), whose union is exactly the conjunction.
[[nodiscard]] std::vector<Conjunction> as_seccomp_rules(const Conjunction& c, Ranges ranges);

// "arg0 == 16 && (arg1 & 0x7e020000) == 0" in the policy language.
[[nodiscard]] std::string condition_text(const Conjunction& c);

// The comparison as a policy IR condition (not yet narrowed to 32-bit arguments).
[[nodiscard]] Condition to_condition(const ArgCmp& c);
[[nodiscard]] ArgCmp narrowed_to_32_bits(ArgCmp c);

// Why `op value` on an argument the kernel reads as a 32-bit int cannot be cut to the low 32
// bits without changing what it means (an ordering bound above 0xffffffff, or an equality
// value that is neither a 32-bit one nor one sign-extended from it), or empty when it can.
[[nodiscard]] std::string why_not_32_bits(CmpOp op, std::uint64_t value);

}  // namespace jail::policy::detail
