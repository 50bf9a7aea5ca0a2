// Ubuntu (24.04 and later) lets an unprivileged user namespace be made but gives it no
// capability unless an AppArmor profile grants `userns`: the jail's first mount inside fails
// with EPERM, after the clone succeeded. --isolation auto asks first, where that restriction is
// on, so it can run the tool in the Landlock mode instead of failing.
#pragma once

namespace jail {

// Whether this host restricts unprivileged user namespaces that way:
// kernel.apparmor_restrict_unprivileged_userns = 1, or JAIL_ASSUME_RESTRICTED_USERNS set (the
// tests' stand-in, on a host without AppArmor).
[[nodiscard]] bool userns_restricted_here();

// Where userns_restricted_here(): whether a user namespace made by this caller can mount (a
// child unshares one and makes its mounts private, as the jail's init does first). Asked once
// per process; false where the restriction is off.
[[nodiscard]] bool userns_cannot_mount();

}  // namespace jail
