#include "runsc_orphans.hpp"

#include <dirent.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

namespace jail::runner {
namespace {

// This process's children, from every thread's list (an orphan is reparented to whichever
// thread; runsc is cloned from libjail's lasting thread).
std::vector<pid_t> children() {
  std::vector<pid_t> pids;
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) return pids;
  while (const dirent* task = ::readdir(tasks)) {
    if (task->d_name[0] == '.') continue;
    std::ifstream list(std::string("/proc/self/task/") + task->d_name + "/children");
    pid_t pid = 0;
    while (list >> pid) pids.push_back(pid);
  }
  ::closedir(tasks);
  return pids;
}

}  // namespace

RunscOrphans::RunscOrphans(bool runsc) {
  if (!runsc) return;
  // Children jail was started with (a shell's `sleep 30 & exec jail …` keeps them) are not the
  // run's: they are never waited for here.
  inherited_ = children();
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
    std::vector<pid_t> left;
    for (const pid_t pid : children()) {
      if (std::find(inherited_.begin(), inherited_.end(), pid) != inherited_.end()) continue;
      int status = 0;
      pid_t waited = -1;
      do {
        waited = ::waitpid(pid, &status, WNOHANG | __WALL);
      } while (waited < 0 && errno == EINTR);
      if (waited == 0) left.push_back(pid);
    }
    if (left.empty()) return;
    if (std::chrono::steady_clock::now() >= give_up) {
      spdlog::warn(
          "runsc's processes {} had not ended {} ms after the run; left to the caller's "
          "reaper",
          fmt::join(left, " "), patience.count());
      return;
    }
    // Killed already (runsc's parent-death signal): they end within a few ms.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace jail::runner
