// Host side: the seccomp filter the helper puts on itself once set-up is done.
#pragma once

namespace jail::egress {

// Loads a kill-by-default filter allowing what the proxy's threads, the relay and glibc's
// resolver use (docs/egress.md lists it). Needs no_new_privs; throws SetupError.
void load_own_filter();

}  // namespace jail::egress
