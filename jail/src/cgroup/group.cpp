// Group: the lifetime of one jail's cgroup — creation, attach, accounting, kill and removal —
// dispatched to the v1 or v2 back end.
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "log.hpp"

#include "files.hpp"
#include "state.hpp"

namespace jail::cgroup {

namespace {

// How long remove() waits for killed tasks to leave and for rmdir to stop reporting EBUSY.
constexpr std::chrono::milliseconds kDrainLimit{2000};

int pidfd_open(pid_t pid) {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

int pidfd_kill(int pidfd) {
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0));
}

void validate(const Limits& limits) {
  if (limits.memory_bytes && *limits.memory_bytes == 0) {
    fail("cgroup limits", EINVAL, "set a memory limit of 0 bytes", "give a size above zero");
  }
  if (limits.pids && *limits.pids == 0) {
    fail("cgroup limits", EINVAL, "set a pids limit of 0", "the tool itself needs at least 1");
  }
  if (limits.cpus && !(std::isfinite(*limits.cpus) && *limits.cpus > 0)) {
    fail("cgroup limits", EINVAL, fmt::format("set a cpu limit of {}", *limits.cpus),
         "give a positive number of cores, e.g. 0.5");
  }
}

std::vector<std::string> paths_of(const Group::State& state) {
  std::vector<std::string> out;
  for (const auto& d : state.dirs) out.push_back(d.path);
  return out;
}

}  // namespace

[[noreturn]] void fail(const std::string& step, int err, const std::string& what,
                       const std::string& advice) {
  std::string message = fmt::format("cannot {}", what);
  if (err != 0) message += ": " + files::errno_text(err);
  if (!advice.empty()) message += ": " + advice;
  throw Error(step, err, message);
}

std::string advice_for(int err) {
  switch (err) {
    case EACCES:
    case EPERM:
    case EROFS:
      return "this user may not create or change cgroups here; run jail as root, or under a "
             "cgroup delegated to you: `systemd-run --user --scope -p Delegate=yes jail ...`, or "
             "pass --cgroup-parent with a cgroup you own";
    case ENOENT:
      return "no such cgroup or file (a wrong --cgroup-parent, or a controller not enabled for "
             "this cgroup)";
    case ENOSPC:
    case EAGAIN:
      return "the cgroup tree is full (cgroup.max.descendants or cgroup.max.depth of a parent)";
    default:
      return {};
  }
}

bool kill_listed(const std::vector<std::string>& dirs, std::chrono::milliseconds limit) noexcept {
  try {
    return files::poll_until(limit, [&] {
      std::vector<pid_t> pids;
      for (const auto& dir : dirs) {
        for (pid_t pid : files::procs(dir)) pids.push_back(pid);
      }
      if (pids.empty()) return true;
      // A pid read from cgroup.procs may exit and be reused by an unrelated process before we
      // signal it. A pidfd pins one process; if its pid is still listed after the pidfd was
      // opened, the pidfd refers to the task in our cgroup.
      std::vector<std::pair<pid_t, int>> pinned;
      for (pid_t pid : pids) {
        const int fd = pidfd_open(pid);
        if (fd >= 0) {
          pinned.emplace_back(pid, fd);
        } else if (errno == ENOSYS) {
          ::kill(pid, SIGKILL);  // before 5.3: no pidfds, accept the reuse window
        }
      }
      std::vector<pid_t> still;
      for (const auto& dir : dirs) {
        for (pid_t pid : files::procs(dir)) still.push_back(pid);
      }
      for (const auto& [pid, fd] : pinned) {
        if (std::find(still.begin(), still.end(), pid) != still.end()) pidfd_kill(fd);
        ::close(fd);
      }
      return false;
    });
  } catch (const std::exception& e) {
    jail::log().error("cgroup: killing tasks: {}", e.what());
    return false;
  }
}

Group::State::~State() {
  if (v2_fd >= 0) ::close(v2_fd);
}

const Group::State::Dir* Group::State::dir_with(std::string_view controller) const {
  for (const auto& d : dirs) {
    if (std::find(d.controllers.begin(), d.controllers.end(), controller) != d.controllers.end()) {
      return &d;
    }
  }
  return nullptr;
}

Group::Group() noexcept = default;
Group::Group(std::unique_ptr<State> state) noexcept : state_(std::move(state)) {}
Group::Group(Group&& other) noexcept = default;

Group& Group::operator=(Group&& other) noexcept {
  if (this != &other) {
    (void)remove();
    state_ = std::move(other.state_);
  }
  return *this;
}

Group::~Group() {
  (void)remove();
}

Group Group::create(const Limits& limits, const std::optional<std::string>& parent_override) {
  return create(limits, parent_override, detect_layout());
}

Group Group::create(const Limits& limits, const std::optional<std::string>& parent_override,
                    const Layout& layout) {
  validate(limits);
  if (layout.mode == Mode::none) {
    if (!limits.any()) return {};
    fail("cgroup", ENOENT, "find a mounted cgroup filesystem in /proc/self/mountinfo",
         "mount cgroup2 at /sys/fs/cgroup, or run without --memory, --pids and --cpus");
  }
  // The Group owns whatever the back end records as it goes, so a throw halfway through still
  // removes every directory already made and gives back the parent's preparation.
  Group group(std::make_unique<State>());
  if (layout.mode == Mode::v2) {
    v2::setup(*group.state_, limits, parent_override, *layout.v2);
  } else {
    // Hybrid mode: the controllers live in v1; the controller-less v2 mount adds nothing.
    v1::setup(*group.state_, limits, parent_override, layout);
  }
  if (group.state_->dirs.empty()) {
    (void)group.remove();
    jail::log().debug("cgroup: no cgroup for this run (no limits asked for, none could be made)");
    return {};
  }
  jail::log().debug("cgroup: created {}", fmt::join(paths_of(*group.state_), ", "));
  return group;
}

int Group::version() const {
  return state_ ? state_->version : 0;
}

std::vector<std::string> Group::dirs() const {
  return state_ ? paths_of(*state_) : std::vector<std::string>{};
}

std::string Group::dir_for(std::string_view controller) const {
  if (!state_ || state_->dirs.empty()) return {};
  if (state_->version == 2) return state_->dirs.front().path;
  const auto* d = state_->dir_with(controller);
  return d ? d->path : std::string{};
}

int Group::v2_fd() const {
  return state_ && state_->version == 2 ? state_->v2_fd : -1;
}

void Group::attach(pid_t pid) {
  if (!state_) return;
  if (state_->version == 2) {
    v2::attach(*state_, pid);
  } else {
    v1::attach(*state_, pid);
  }
}

std::vector<UniqueFd> Group::open_v1_tasks() const {
  if (!state_ || state_->version != 1) return {};
  return v1::open_tasks(*state_);
}

Usage Group::usage() const {
  if (!state_) return {};
  sample_memory();
  return state_->version == 2 ? v2::usage(*state_) : v1::usage(*state_);
}

void Group::sample_memory() const {
  if (!state_) return;
  const std::string dir = dir_for("memory");
  if (dir.empty()) return;
  const char* file = state_->version == 2 ? "/memory.current" : "/memory.usage_in_bytes";
  if (const auto now = files::number(files::read(dir + file).value_or(""))) {
    state_->polled_peak = std::max(state_->polled_peak, *now);
  }
}

bool Group::kill_all() noexcept {
  if (!state_ || state_->dirs.empty()) return true;
  if (state_->version == 2 && v2::kill(*state_)) {
    return files::poll_until(kDrainLimit, [&] { return !v2::populated(*state_); });
  }
  const bool empty = kill_listed(paths_of(*state_), kDrainLimit);
  if (state_->version == 2) {
    return files::poll_until(kDrainLimit, [&] { return !v2::populated(*state_); });
  }
  return empty;
}

bool Group::remove() noexcept {
  if (!state_) return true;
  bool ok = true;
  try {
    if (!state_->dirs.empty() && !kill_all()) {
      jail::log().error("cgroup: tasks still alive in {} after SIGKILL",
                        fmt::join(paths_of(*state_), ", "));
      ok = false;
    }
    for (auto it = state_->dirs.rbegin(); it != state_->dirs.rend(); ++it) {
      // A cgroup whose last task just died may stay busy for a moment while the kernel
      // finishes tearing the task down; rmdir says EBUSY until then.
      int err = 0;
      const bool gone = files::poll_until(kDrainLimit, [&] {
        if (::rmdir(it->path.c_str()) == 0 || errno == ENOENT) return true;
        err = errno;
        return false;
      });
      if (!gone) {
        jail::log().error("cgroup: cannot remove {}: {}", it->path, files::errno_text(err));
        ok = false;
      }
    }
  } catch (const std::exception& e) {
    jail::log().error("cgroup: removing {}: {}", fmt::join(paths_of(*state_), ", "), e.what());
    ok = false;
  }
  if (!state_->v2_parent.empty() && !subtree::release(state_->v2_parent)) ok = false;
  state_.reset();
  return ok;
}

}  // namespace jail::cgroup
