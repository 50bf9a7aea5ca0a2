// Child side: the processes between jail and gVisor. `runsc run`'s sandbox and gofer outlive it
// by a moment (runsc ends them with a parent-death signal as it exits), so they are orphaned and
// go to the nearest child subreaper. In a host that is one (tini -s, systemd --user, a plugin host
// that is PID 1 in its container) they became two zombies per run that the host never started.
// So jail starts a keeper instead of runsc: a child subreaper of its own that starts runsc, takes
// in what runsc leaves, and ends as runsc ended once all of it is reaped.
//
// Everything here runs after a clone: no allocation, no exceptions, no logging.
#pragma once

#include <linux/sched.h>
#include <signal.h>

#include <span>

#include "child/plan.hpp"

namespace jail {

// Sent by jail with SI_QUEUE and kKeeperStopMarker as its value (stop_keeper), it has the keeper
// SIGKILL runsc run and go on reaping: SIGKILL to the keeper itself would end runsc too, but hand
// runsc's sandbox and gofer to the caller's reaper. Every other signal the keeper gets from
// outside (the same number without the marker too) is passed on to runsc run as it is, but the
// C library's internal 32 and 33, which stay blocked.
inline int keeper_stop_signal() {
  return SIGRTMAX;
}
inline constexpr int kKeeperStopMarker = 0x6a61696c;  // "jail"

// Asks the keeper behind `keeper_pidfd` to end runsc (above). Parent side.
void stop_keeper(int keeper_pidfd);

// What runsc needs once it runs: its argv and envp, its stdio (fd 0-2; -1 keeps the inherited
// one), fd 3 its debug log when `debug_log` >= 0, and the v1 `tasks` files of the jail's
// cgroups, which it joins before its exec (v2: the clone places it). `report_fd` is the report
// socket (child/report.hpp) on which the keeper and runsc's process name a step that failed
// before runsc ran; without it their exit 125 would read as the tool's own. `host_binds`: the
// binds runsc's process makes in the bundle's rootfs, in a mount namespace of its own, before
// its exec (oci/host_side_binds.hpp).
struct RunscExec {
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int stdio[3] = {-1, -1, -1};
  int debug_log = -1;
  int report_fd = -1;
  std::span<const int> cgroup_tasks;
  child::HostBinds host_binds;
};

// Becomes runsc: joins the cgroups, sets up its fds, closes the rest and execs; a step that fails
// (the exec among them) is reported, and the process exits 125.
[[noreturn]] void exec_runsc(RunscExec exec);

// The keeper's body (see above): starts runsc with `runsc_clone` (SIGCHLD as exit signal,
// CLONE_INTO_CGROUP for v2), vfork-style where it can (child/vfork_clone.hpp), closes every fd it
// holds but `lifeline` (the caller's other pipes must not stay open in it), passes signals on, and
// reaps runsc and every orphan it takes in. Ends with runsc run's wait status: its exit code, or
// death by the same signal. What is left 5 s after runsc ended is left to the caller's reaper.
// `lifeline` is the read end of a pipe whose write end jail keeps for the run (Process::State::
// go_write, as a native jail's init has): at its end of file jail's process is gone, and the
// keeper kills runsc run. Not a parent-death signal, which the kernel sends when the *thread*
// that cloned the keeper ends: a host that launches from a pool thread would lose its run.
[[noreturn]] void keep_runsc(clone_args runsc_clone, const RunscExec& exec, int lifeline);

}  // namespace jail
