// Child side: become the tool's identity with no way back — every capability set empty,
// no_new_privs, securebits locked. Fails closed: any step that cannot be confirmed ends the run.
#pragma once

#include "child/plan.hpp"

namespace jail::child {

// setresgid/setresuid to the tool's ids (and a root caller's groups cleared), keeping the
// capabilities the init has over its own namespaces: the namespace maps no other id to act as.
void take_tool_ids(const Plan& plan);
void drop_identity(const Plan& plan);
// The Landlock mode's: the tool keeps the caller's own ids (no namespace maps others); what it
// gives up is every capability (an unprivileged caller has none to start with) and new privileges.
void keep_caller_identity(const Plan& plan);

}  // namespace jail::child
