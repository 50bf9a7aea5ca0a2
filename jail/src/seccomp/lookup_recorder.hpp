// Parent side: notes the paths the tool looks up (LookupTrace::record). Each notification of a
// lookup call is read here while the calling thread waits: the path from the tool's memory, and
// for a relative path the directory it starts from, as the jail sees it.
#pragma once

#include <linux/seccomp.h>

#include <cstddef>
#include <string>
#include <unordered_set>
#include <vector>

#include "jail/result.hpp"

namespace jail {

class LookupRecorder {
 public:
  // Bounds on what is kept, so a tool that probes without end cannot grow the supervisor's
  // memory without end: past either, lookups are only counted.
  static constexpr std::size_t kMaxPaths = 4096;
  static constexpr std::size_t kMaxPathBytes = 1 << 20;

  // `jail_mounts`: the absolute, normalised mount points the jail puts over the root; lookups
  // below them are counted, not kept.
  explicit LookupRecorder(std::vector<std::string> jail_mounts);

  [[nodiscard]] static bool traces(int syscall);

  // `request` must still be pending on `listener`: what was read is trusted only if the
  // notification is still valid afterwards (else the thread, and perhaps its pid, are gone).
  void record(const seccomp_notif& request, int listener);

  [[nodiscard]] const Lookups& lookups() const { return lookups_; }

 private:
  std::vector<std::string> jail_mounts_;
  Lookups lookups_;
  // The paths kept, each marked with its FinalLink, or as run (execve).
  std::unordered_set<std::string> seen_;
  std::size_t bytes_ = 0;
};

}  // namespace jail
