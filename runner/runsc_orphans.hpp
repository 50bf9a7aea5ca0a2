// The jail command's side of a gVisor run: runsc run's sandbox and gofer processes outlive it by
// a moment (runsc ends them with a parent-death signal as it exits), so they are orphaned and
// reparented to the nearest child subreaper. A caller that is one — tini -s, systemd --user, a
// plugin host that reaps with waitpid(-1) — would find two zombies per run it never started.
// The jail command becomes that subreaper for the run and reaps them before it exits.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <vector>

namespace jail::runner {

class RunscOrphans {
 public:
  // Makes this process a child subreaper (PR_SET_CHILD_SUBREAPER) when `runsc` is true.
  explicit RunscOrphans(bool runsc);
  RunscOrphans(const RunscOrphans&) = delete;
  RunscOrphans& operator=(const RunscOrphans&) = delete;
  // Reaps, if reap() was not called: a run that ended in an exception leaves orphans too.
  ~RunscOrphans();
  // Waits for every child that was not there at construction and reaps it, for at most
  // `patience`: what is still alive then is left to the caller's reaper, and said. Once.
  void reap(std::chrono::milliseconds patience = std::chrono::seconds(5));

 private:
  bool active_ = false;
  std::vector<pid_t> inherited_;
};

}  // namespace jail::runner
