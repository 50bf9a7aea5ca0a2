// Parent side: the tool's seccomp policy, loaded, checked and compiled before clone.
#pragma once

#include <linux/filter.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "policy/compile.hpp"
#include "policy/policy.hpp"

namespace jail {

struct PreparedPolicy {
  std::shared_ptr<const policy::Policy> policy;  // the supervisor evaluates denials with it
  policy::Program program;                       // routed as asked (native: user notification)
  sock_fprog fprog{};                            // points into program; what the child loads
  std::string name;                              // as the user gave it
};

// nullopt for "none". Throws jail::Error (step "policy") with every diagnostic of a bad policy,
// and when the policy refuses what jail itself needs to start the tool (execve) or to report a
// failed start (write, exit_group). `routing` is notify for a native run, whose supervisor
// answers; direct for a filter loaded inside gVisor (runsc/policy_loader.hpp).
[[nodiscard]] std::unique_ptr<PreparedPolicy> prepare_policy(
    const std::string& name_or_path, policy::Routing routing = policy::Routing::notify);

// As prepare_policy, loaded and checked but not compiled yet: compile_routed does that.
[[nodiscard]] std::unique_ptr<PreparedPolicy> load_policy_for_run(const std::string& name_or_path);

// Compiles `prepared`'s program from `routed`: prepared.policy itself (`what` empty), or the
// same policy with some allowed calls sent to the supervisor (connects, lookups, exits: `what`);
// prepared.policy stays the caller's, for the supervisor's decisions. Throws jail::Error (step
// "policy"), naming `what`.
void compile_routed(PreparedPolicy& prepared, const policy::Policy& routed, std::string_view what,
                    policy::Routing routing = policy::Routing::notify);

// Learn mode: every syscall but the baseline's fixed rules is logged (allowed and reported).
// Not compiled yet: compile_routed does that.
[[nodiscard]] std::unique_ptr<PreparedPolicy> prepare_learning_policy();

}  // namespace jail
