// Parent side: with RLIMIT_NOFILE in force, the tool's filter sends exit_group to the supervisor
// (which lets it run) so that a process's descriptors can be counted while it still holds them:
// the kernel says nothing when an open fails with EMFILE, and after the exit the table is gone.
// The policy's decisions do not change; only the compiled filter differs, as for lookups.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "policy/policy.hpp"

namespace jail {

// `policy` with every rule that allows exit_group (and the default, when it allows) made `log`:
// routed to the supervisor, which evaluates the caller's own policy and lets the call run.
// Throws jail::Error (step "policy") when the policy does not plainly allow exit, which a
// failed start then ends with (child/exec.cpp).
[[nodiscard]] policy::Policy with_exits_watched(const policy::Policy& policy,
                                                const std::string& name);

// How many descriptors process `pid` (of this process's /proc) holds, when that is every one
// `limit` allows (all of 0..limit-1: the next open fails with EMFILE); nullopt when one is free
// or /proc cannot tell. Cheap in the common case: one lookup of descriptor limit-1.
[[nodiscard]] std::optional<std::uint64_t> descriptors_at_limit(pid_t pid, std::uint64_t limit);

}  // namespace jail
