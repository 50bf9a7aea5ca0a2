// Parent side: with the current directory bound read-only (jail's default), the tool's filter
// sends its write-intent calls (open/openat with a write flag, creat, mkdir, mkdirat) to the
// supervisor, which lets them run and notes one that lands in that read-only directory: the
// tool got EROFS there, and jail ends with one line saying which flag makes it writable. The
// policy's decisions do not change; only the compiled filter differs, as for lookups and exits.
#pragma once

#include <linux/seccomp.h>

#include <optional>
#include <string>

#include "policy/policy.hpp"

namespace jail {

// `policy` with each rule that allows a write-intent call preceded by a `log` rule for it (on the
// write flags, for open and openat), so that call reaches the supervisor; the same for the
// default, when it allows.
[[nodiscard]] policy::Policy with_writes_watched(const policy::Policy& policy);

// Whether `request` (a write-intent call, waiting) writes in the read-only directory `cwd` of
// the jail: the path, as the jail sees it, when it does.
[[nodiscard]] std::optional<std::string> write_in_read_only(const seccomp_notif& request,
                                                            const std::string& cwd);

}  // namespace jail
