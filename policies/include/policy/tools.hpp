// Reviewer tools over a loaded policy: lint and explain.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "policy/policy.hpp"

namespace jail::policy {

// Findings: dangerous syscalls allowed without a justification comment on the line above
// (error), rules shadowed by an earlier unconditional rule, `default allow`, conditions that
// can never match (warnings).
[[nodiscard]] std::vector<Diagnostic> lint(const Policy& policy);

// syscall → its rules in order, each with action, condition and file:line, then the default.
// With `syscalls` empty: every syscall the policy names.
[[nodiscard]] std::string explain_text(const Policy& policy,
                                       const std::vector<std::string>& syscalls = {});
[[nodiscard]] nlohmann::json explain_json(const Policy& policy,
                                          const std::vector<std::string>& syscalls = {});

// The names that are "dangerous" for lint (kernel attack surface or escape routes).
[[nodiscard]] bool is_dangerous_syscall(std::string_view name);

}  // namespace jail::policy
