// Parent side, before clone: for LookupTrace::record, the tool's filter sends the path lookups
// its policy allows to the supervisor (which notes the path and lets the call run) instead of
// allowing them in the kernel. The policy's decisions do not change: the supervisor still
// evaluates the caller's own policy, and only the compiled filter differs.
#pragma once

#include <cstdint>

#include "policy/policy.hpp"

namespace jail {

// `policy` with every rule that allows a lookup call (and the default, when it allows) split in
// two: allowed in the kernel when the call is jail's own start of the tool (execve with the
// environment array at `start_envp`, which must not wait for a supervisor that is not listening
// yet) or acts on an fd (AT_EMPTY_PATH), and `log` — routed to the supervisor — otherwise.
[[nodiscard]] policy::Policy with_lookups_traced(const policy::Policy& policy,
                                                 std::uint64_t start_envp);

}  // namespace jail
