// Child side: the tool leaves the caller's session keyring behind. See plan.hpp.
#pragma once

#include "child/plan.hpp"

namespace jail::child {

// The init joins an empty session keyring of its own, which the tool inherits, so it possesses
// none of the caller's keys. ENOSYS: a kernel without keys, nothing to leave behind. EPERM:
// keyctl itself is refused, as a container's profile does (Docker's); the init then refuses
// add_key, request_key and keyctl for itself and the tool, so that whatever refused the join,
// no key is the tool's to use. Any other failure ends the run.
void leave_callers_keyring(const Plan& plan);

}  // namespace jail::child
