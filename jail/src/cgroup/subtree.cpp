// The v2 parent of jail's cgroups: enabling controllers for its children.
//
// A controller limits a child only once the parent lists it in cgroup.subtree_control. A
// non-root parent must then hold no processes of its own — the "no internal process" rule. For
// domain controllers (memory, io) the kernel refuses the write with EBUSY; for threaded ones
// (pids, cpu) it accepts it but turns the parent into a thread root, and then refuses to put any
// process into a normal child with EOPNOTSUPP. So jail empties the parent before enabling
// anything: when the only process there is jail itself (the usual case under
// `systemd-run --scope -p Delegate=yes`) it moves itself into a leaf
// `<parent>/jail-supervisor-<pid>`; it never moves anyone else. The last jail of this process to
// finish undoes both, so the caller's cgroup is left as jail found it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <mutex>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "log.hpp"

#include "files.hpp"
#include "state.hpp"

namespace jail::cgroup::subtree {

namespace {

struct Parent {
  int users = 0;
  std::string leaf;                  // jail-supervisor-<pid>, when jail moved itself
  std::vector<std::string> enabled;  // controllers jail added to subtree_control
};

std::mutex mutex;
std::map<std::string, Parent> parents;

bool contains(const std::vector<std::string>& list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

// Moves this process out of `parent` into a fresh leaf. Returns 0 or why not (an errno).
int move_self_out(const std::string& parent, Parent& state) {
  const pid_t self = ::getpid();
  const std::string leaf = fmt::format("{}/jail-supervisor-{}", parent, self);
  if (::mkdir(leaf.c_str(), 0755) != 0) return errno;
  if (const int err = files::write(leaf + "/cgroup.procs", std::to_string(self))) {
    ::rmdir(leaf.c_str());
    return err;
  }
  state.leaf = leaf;
  jail::log().debug("cgroup: moved jail (pid {}) into {} so {} can enable controllers", self, leaf,
                    parent);
  return 0;
}

// Makes sure `parent` holds no process before it distributes controllers. Returns 0, EBUSY when
// someone else's processes are there, or the errno of moving jail out.
int empty_parent(const std::string& parent, Parent& state) {
  // The root cgroup is exempt from the rule; it is the only one without cgroup.type.
  if (!state.leaf.empty() || !files::exists(parent + "/cgroup.type")) return 0;
  // Not allowed to enable anything here at all: say so, rather than name the processes.
  if (::faccessat(AT_FDCWD, (parent + "/cgroup.subtree_control").c_str(), W_OK, AT_EACCESS) != 0) {
    return errno;
  }
  const auto procs = files::procs(parent);
  if (procs.empty()) return 0;
  const pid_t self = ::getpid();
  for (pid_t pid : procs) {
    if (pid != self) return EBUSY;  // someone else's process: not ours to move
  }
  return move_self_out(parent, state);
}

int enable(const std::string& parent, const std::string& controller, Parent& state) {
  const int err = files::write(parent + "/cgroup.subtree_control", "+" + controller);
  if (err == 0) state.enabled.push_back(controller);
  return err;
}

std::string busy_advice(const std::string& parent) {
  return fmt::format(
      "other processes live in {} itself, and the kernel lets a cgroup hand controllers to "
      "children only when it has no processes of its own; run jail in a cgroup of its own, e.g. "
      "`systemd-run --user --scope -p Delegate=yes jail ...`, or pass --cgroup-parent",
      parent);
}

// Undoes what jail did to `parent`. Called with the mutex held, once no jail uses it.
bool undo(const std::string& parent, const Parent& state) {
  bool ok = true;
  if (!state.enabled.empty()) {
    // Only when no other child (another jail, someone else's) might rely on them.
    const auto children = files::subdirs(parent);
    const std::string leaf_name = state.leaf.substr(state.leaf.rfind('/') + 1);
    const bool alone = children.empty() || (children.size() == 1 && !state.leaf.empty() &&
                                            children.front() == leaf_name);
    if (alone) {
      for (auto it = state.enabled.rbegin(); it != state.enabled.rend(); ++it) {
        const int err = files::write(parent + "/cgroup.subtree_control", "-" + *it);
        if (err != 0) {
          jail::log().error("cgroup: cannot write -{} to {}/cgroup.subtree_control: {}", *it,
                            parent, files::errno_text(err));
          ok = false;
        }
      }
    } else if (!state.leaf.empty()) {
      jail::log().error("cgroup: {} has other children now; leaving {} enabled and jail in {}",
                        parent, fmt::join(state.enabled, " "), state.leaf);
      return false;
    } else {
      jail::log().debug("cgroup: {} has other children; leaving {} enabled in it", parent,
                        fmt::join(state.enabled, " "));
    }
  }
  if (!state.leaf.empty()) {
    const int err = files::write(parent + "/cgroup.procs", std::to_string(::getpid()));
    if (err != 0) {
      jail::log().error("cgroup: cannot move jail back into {}: {}", parent,
                        files::errno_text(err));
      return false;
    }
    const bool gone = files::poll_until(std::chrono::milliseconds(500), [&] {
      return ::rmdir(state.leaf.c_str()) == 0 || errno == ENOENT;
    });
    if (!gone) {
      jail::log().error("cgroup: cannot remove {}: {}", state.leaf, files::errno_text(errno));
      ok = false;
    }
  }
  return ok;
}

}  // namespace

std::vector<std::string> prepare(const std::string& parent,
                                 const std::vector<std::string>& required,
                                 const std::vector<std::string>& optional) {
  std::lock_guard lock(mutex);
  Parent& state = parents[parent];
  ++state.users;
  const auto already =
      files::words(files::read(parent + "/cgroup.subtree_control").value_or(std::string{}));
  auto missing = [&](const std::vector<std::string>& list) {
    return std::any_of(list.begin(), list.end(),
                       [&](const std::string& c) { return !contains(already, c); });
  };
  int emptied = 0;
  if (missing(required) || missing(optional)) emptied = empty_parent(parent, state);
  if (emptied != 0 && missing(required)) {
    fail("cgroup parent", emptied, fmt::format("enable controllers in {}", parent),
         emptied == EBUSY ? busy_advice(parent) : advice_for(emptied));
  }

  std::vector<std::string> on;
  for (const auto& c : required) {
    if (contains(already, c)) {
      on.push_back(c);
      continue;
    }
    if (const int err = enable(parent, c, state)) {
      fail(fmt::format("cgroup {}", c), err,
           fmt::format("write +{} to {}/cgroup.subtree_control", c, parent),
           err == EBUSY ? busy_advice(parent) : advice_for(err));
    }
    on.push_back(c);
  }
  for (const auto& c : optional) {
    if (contains(already, c)) {
      on.push_back(c);
    } else if (emptied != 0) {
      jail::log().debug("cgroup: no {} accounting: {} is not empty: {}", c, parent,
                        files::errno_text(emptied));
    } else if (const int err = enable(parent, c, state)) {
      jail::log().debug("cgroup: no {} accounting: cannot enable it in {}: {}", c, parent,
                        files::errno_text(err));
    } else {
      on.push_back(c);
    }
  }
  return on;
}

std::optional<std::string> home_of(const std::string& dir) {
  std::lock_guard lock(mutex);
  for (const auto& [parent, state] : parents) {
    if (!state.leaf.empty() && state.leaf == dir) return parent;
  }
  return std::nullopt;
}

bool release(const std::string& parent) noexcept {
  try {
    std::lock_guard lock(mutex);
    const auto it = parents.find(parent);
    if (it == parents.end()) return true;
    if (--it->second.users > 0) return true;
    const bool ok = undo(parent, it->second);
    parents.erase(it);
    return ok;
  } catch (const std::exception& e) {
    jail::log().error("cgroup: releasing {}: {}", parent, e.what());
    return false;
  }
}

}  // namespace jail::cgroup::subtree
