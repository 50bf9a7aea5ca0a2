// The rules of a learned policy, from what a learning run saw: jail's own calls, the families the
// run used (policy/learn_families.hpp), then the samples no family covers, with their argument
// values by name, dangerous calls marked REVIEW. Only what the bound can allow is written, and in
// a merge only what the policy widened does not allow already.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jail/result.hpp"
#include "policy/policy.hpp"

namespace jail::runner {

struct RulesRequest {
  // The policy the rules are `within`: a rule for a call it refuses everywhere would do nothing.
  const policy::Policy* bound = nullptr;
  // In a merge, the policy widened: what it allows already is not written again.
  const policy::Policy* already = nullptr;
  bool strict = false;  // exact samples: no families
};

[[nodiscard]] std::string learned_rules(const std::vector<SyscallUse>& seen,
                                        const RulesRequest& request);

// "1 call", "2 calls": the counts are read by people reviewing the policy.
[[nodiscard]] std::string counted(std::uint64_t n, std::string_view one, std::string_view many);

// Whether `p` lets every call of `use` the run made run, including those past the samples kept.
[[nodiscard]] bool allows_use(const policy::Policy& p, const SyscallUse& use);

// One line per call the run made that `limit` refuses, for some argument the run gave it:
// "ptrace (2 calls): default.policy:88 answers it with kill". The learned policy refuses them too.
[[nodiscard]] std::vector<std::string> refused_by(const policy::Policy& limit,
                                                  const std::vector<SyscallUse>& seen);

}  // namespace jail::runner
