// The Landlock mode below ABI 6, where Landlock does not keep the tool's signals inside its
// domain: the filter sends every call that signals a process to the supervisor, which lets it
// run only when its target is one of the jail's processes (a descendant of the init). So the
// tool can't signal, stop or kill the caller's other processes on Ubuntu 24.04 (ABI 4) or
// Debian 12 (ABI 2) either.
#pragma once

#include <linux/seccomp.h>
#include <sys/types.h>

#include "policy/policy.hpp"

namespace jail {

// `policy` with every rule that allows kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo,
// pidfd_open or pidfd_send_signal (whose descriptor may be a /proc/PID directory) routed to the
// supervisor, and SIGIO to a process of the tool's choice refused: fcntl F_SETOWN(_EX), ioctl
// FIOSETOWN and SIOCSPGRP.
[[nodiscard]] policy::Policy with_signals_checked(const policy::Policy& policy);

// Whether `nr` is one of the calls with_signals_checked() routes.
[[nodiscard]] bool is_checked_signal_call(int nr);

// Whether the call in `data`, made by a process of the jail, signals only processes of the jail
// (descendants of `init`): kill(0) (the caller's own process group, inside the tool's session),
// a pid or a process group whose leader descends from `init`. kill(-1) never does. The target is
// held by a pidfd while it is checked, so it can't be replaced by another process of the same
// pid meanwhile; the kernel signals it right after.
// `caller`: the calling thread (pidfd_send_signal's descriptor is read from its table).
[[nodiscard]] bool signal_stays_inside(const seccomp_data& data, pid_t caller, pid_t init);

}  // namespace jail
