#include "runsc_orphans.hpp"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <spdlog/spdlog.h>

namespace jail::runner {

RunscOrphans::RunscOrphans(bool runsc) {
  if (!runsc) return;
  // Without it the orphans still end and are reaped, by someone else: worth a word only.
  active_ = ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
  if (!active_)
    spdlog::debug(
        "cannot become a child subreaper: {}; runsc's last processes are reaped by "
        "the caller's reaper",
        std::strerror(errno));
}

RunscOrphans::~RunscOrphans() {
  try {
    reap();
  } catch (...) {  // only the log could throw; an exit is under way
  }
}

void RunscOrphans::reap(std::chrono::milliseconds patience) {
  if (!active_) return;
  active_ = false;
  const auto give_up = std::chrono::steady_clock::now() + patience;
  for (;;) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG | __WALL);
    if (pid > 0) continue;
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) return;  // ECHILD: none left
    if (std::chrono::steady_clock::now() >= give_up) {
      spdlog::warn(
          "runsc's processes had not all ended {} ms after the run; left to the "
          "caller's reaper",
          patience.count());
      return;
    }
    // Killed already (runsc's parent-death signal): they end within a few ms.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace jail::runner
