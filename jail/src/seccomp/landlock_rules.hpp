// Parent side of the Landlock mode: what the filter adds where Landlock confines less than the
// namespaces would. Each is refused in the kernel (quietly: the supervisor evaluates the
// caller's own policy, which would let it run), first, whatever the policy allows.
#pragma once

#include "policy/policy.hpp"

namespace jail {

struct LandlockGaps {
  bool net_none = false;  // no network namespace: inet and packet sockets refused
  long abi = 0;           // the Landlock ABI in use
};

// Adds to `policy`:
// - under --net none, socket() of AF_INET, AF_INET6, AF_PACKET (EAFNOSUPPORT);
// - chmod, chown and utime by any route (EPERM): Landlock does not confine a file's attributes,
//   so the caller's files anywhere (and those of its read-only binds) would be the tool's to
//   change;
// - scheduling, priority, I/O priority and resource limits of any process but the caller's own
//   (EPERM): setpriority, sched_setaffinity, sched_setscheduler, sched_setparam, sched_setattr,
//   ioprio_set, prlimit64 aimed elsewhere;
// - below ABI 3, truncate(2) and an open for reading with O_TRUNC (EACCES), which Landlock
//   does not confine there.
void add_landlock_gaps(policy::Policy& policy, const LandlockGaps& gaps);

}  // namespace jail
