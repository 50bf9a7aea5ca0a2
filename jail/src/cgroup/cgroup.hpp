// Resource limits and accounting through cgroups (v1, hybrid and v2).
//
// Parent side only: everything here allocates, logs and throws, so none of it may run in the
// child between clone and execve. The launcher creates a Group before clone, hands v2_fd() to
// clone3(CLONE_INTO_CGROUP) or calls attach() while the child still waits on the handshake, and
// reads usage() after the tool has ended.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "../unique_fd.hpp"
#include "jail/error.hpp"

namespace jail::cgroup {

// How cgroups are mounted, as seen by this process.
enum class Mode {
  none,    // no cgroup filesystem visible
  v1,      // only v1 hierarchies
  hybrid,  // v1 hierarchies carry the controllers, a v2 mount carries none we use
  v2,      // unified hierarchy only
};

std::string_view to_string(Mode mode);

// One mounted hierarchy and where this process sits in it.
struct Hierarchy {
  int version = 0;                       // 1 or 2
  std::vector<std::string> controllers;  // v1: from the mount options; v2: cgroup.controllers
  std::string mount_point;               // e.g. /sys/fs/cgroup/memory
  std::string mount_root;                // the hierarchy path the mount shows (mountinfo field 4)
  std::string own_path;                  // from /proc/self/cgroup, e.g. /user.slice/x.scope
  std::string own_dir;                   // mount_point + own_path, empty when not visible
  bool writable = false;  // the effective ids may create and manage cgroups below own_dir
                          // (v2: also hand controllers down), i.e. it is root's or delegated

  [[nodiscard]] bool has(std::string_view controller) const;
  // Directory of a hierarchy path (as /proc/self/cgroup spells it), or empty when that path
  // lies outside what the mount shows.
  [[nodiscard]] std::string dir_of(std::string_view cgroup_path) const;
};

struct Layout {
  Mode mode = Mode::none;
  std::vector<Hierarchy> v1;  // hierarchies with at least one controller (named ones skipped)
  std::optional<Hierarchy> v2;

  // The v1 hierarchy carrying `controller`, or nullptr.
  [[nodiscard]] const Hierarchy* v1_with(std::string_view controller) const;
  // One line per hierarchy, for logs and `jail doctor`-style output.
  [[nodiscard]] std::string describe() const;
};

// Reads /proc/self/mountinfo and /proc/self/cgroup, then asks the kernel which v2 controllers
// are available and whether the caller may create cgroups in its own.
[[nodiscard]] Layout detect_layout();

// The pure part of detect_layout(): no controller list for v2, writable left false.
[[nodiscard]] Layout parse_layout(std::string_view mountinfo, std::string_view proc_self_cgroup);

// A cgroup step failed: a jail::Error (step, errno, whole sentence), so the runner reports it
// like any other setup failure. step() names it ("cgroup memory limit"), err() is the errno.
class Error : public jail::Error {
 public:
  using jail::Error::Error;
  [[nodiscard]] int err() const noexcept { return errno_value(); }
};

struct Limits {
  std::optional<uint64_t> memory_bytes;  // RAM of the whole jail; swap is turned off
  std::optional<uint64_t> pids;          // tasks (processes and threads) in the jail
  std::optional<double> cpus;            // CFS quota in cores, e.g. 0.5

  [[nodiscard]] bool any() const { return memory_bytes || pids || cpus; }
};

// What the jail used. A field is empty (or false) when the cgroup could not tell.
struct Usage {
  std::optional<uint64_t> cpu_user_ms;
  std::optional<uint64_t> cpu_sys_ms;
  std::optional<uint64_t> peak_memory_bytes;
  bool oom_killed = false;        // the kernel's OOM killer killed a task of the jail
  bool memory_limit_hit = false;  // the memory limit was reached (reclaim or OOM)
  bool pids_limit_hit = false;    // a fork or clone failed on the pids limit
};

// One jail's cgroup: a directory per hierarchy (v1) or one leaf (v2), created on construction and
// removed, with every task in it killed, on destruction. Move-only.
class Group {
 public:
  // An empty group: no cgroup, every operation a no-op, usage() all empty.
  Group() noexcept;
  ~Group();
  Group(Group&& other) noexcept;
  Group& operator=(Group&& other) noexcept;
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  // Creates `jail-<pid>-<random>` under the caller's own cgroup, or under `parent_override`
  // (a cgroup path as /proc/self/cgroup writes it, e.g. /user.slice/jail; it must exist).
  // Throws Error when a limit that was asked for cannot be set. With no limits it still creates
  // a cgroup for accounting when it can, and otherwise returns an empty Group.
  [[nodiscard]] static Group create(const Limits& limits,
                                    const std::optional<std::string>& parent_override);
  // The same against a layout the caller detected (or built, in tests).
  [[nodiscard]] static Group create(const Limits& limits,
                                    const std::optional<std::string>& parent_override,
                                    const Layout& layout);

  [[nodiscard]] bool empty() const { return state_ == nullptr; }
  // 1 or 2, 0 when empty.
  [[nodiscard]] int version() const;
  // Directories created for the jail (v1: one per hierarchy used, v2: the leaf).
  [[nodiscard]] std::vector<std::string> dirs() const;
  // Directory of the hierarchy carrying `controller` (v2: the leaf), empty if not used.
  [[nodiscard]] std::string dir_for(std::string_view controller) const;

  // v2: an O_DIRECTORY fd of the leaf for clone3's CLONE_INTO_CGROUP; owned by the Group.
  // -1 for v1, hybrid and empty groups.
  [[nodiscard]] int v2_fd() const;

  // Puts `pid` (and thereby everything it forks later) into the jail's cgroup(s). Call it while
  // the child is still blocked before execve. v2: nothing to do when the child already sits in
  // the leaf (CLONE_INTO_CGROUP). Throws Error when a write fails: the launcher must then kill
  // the child, since its limits would not hold.
  void attach(pid_t pid);

  // v1: each hierarchy's `tasks` file, open for writing, for the child to join its cgroups
  // itself by writing "0" (see child/init.cpp) instead of attach(). A task moving itself takes
  // no threadgroup lock, so it waits for no RCU grace period: 5-15 ms less per start on this
  // kind of host than the parent writing the child's pid. Empty for v2 and empty groups.
  // Throws Error when a file cannot be opened.
  [[nodiscard]] std::vector<UniqueFd> open_v1_tasks() const;

  // Reads the accounting files. Also records memory.current for the peak where the kernel keeps
  // no peak of its own, so the supervisor may call it (or sample_memory()) on a timer.
  [[nodiscard]] Usage usage() const;
  void sample_memory() const;

  // SIGKILLs every task in the jail's cgroup(s). v2: cgroup.kill; v1 (or v2 before 5.14): reads
  // cgroup.procs and kills each pid through a pidfd until none is left, for at most ~2 s.
  // Returns false when tasks are still there at the end.
  bool kill_all() noexcept;

  // Kills what is left, waits until the cgroup is empty (bounded, ~2 s), removes every directory
  // created (deepest first) and puts jail back where it was if it moved itself. Returns false
  // (after logging each failure) when something could not be removed. The group is empty after.
  [[nodiscard]] bool remove() noexcept;

  struct State;

 private:
  explicit Group(std::unique_ptr<State> state) noexcept;
  std::unique_ptr<State> state_;
};

}  // namespace jail::cgroup
