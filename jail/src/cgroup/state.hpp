// What a Group owns, and the entry points of the v1 and v2 back ends. Internal to
// jail/src/cgroup.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cgroup.hpp"

namespace jail::cgroup {

struct Group::State {
  struct Dir {
    std::string path;                      // a directory jail created
    std::vector<std::string> controllers;  // the controllers of its hierarchy (v2: enabled ones)
  };

  int version = 0;
  std::vector<Dir> dirs;  // in creation order; removed in reverse
  int v2_fd = -1;         // O_DIRECTORY fd of the v2 leaf
  std::string v2_cgroup;  // the leaf's path as /proc/<pid>/cgroup spells it
  std::string v2_parent;  // the parent dir prepared by subtree.cpp; released on remove
  mutable uint64_t polled_peak = 0;

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State();

  [[nodiscard]] const Dir* dir_with(std::string_view controller) const;
};

// Builds the message a user can act on and throws it.
[[noreturn]] void fail(const std::string& step, int err, const std::string& what,
                       const std::string& advice = {});
// Advice for an errno met while creating or writing a cgroup.
std::string advice_for(int err);

// SIGKILLs every task listed in the cgroup.procs of `dirs` until none is left or `limit` passes.
bool kill_listed(const std::vector<std::string>& dirs, std::chrono::milliseconds limit) noexcept;

namespace v1 {
// Creates the directories and writes the limits; records each directory in `state` as soon as
// it exists, so a throw leaves nothing the Group's removal would miss.
void setup(Group::State& state, const Limits& limits,
           const std::optional<std::string>& parent_override, const Layout& layout);
void attach(const Group::State& state, pid_t pid);
std::vector<UniqueFd> open_tasks(const Group::State& state);
Usage usage(const Group::State& state);
}  // namespace v1

namespace v2 {
void setup(Group::State& state, const Limits& limits,
           const std::optional<std::string>& parent_override, const Hierarchy& hierarchy);
void attach(const Group::State& state, pid_t pid);
Usage usage(const Group::State& state);
// cgroup.kill (5.14+); false when the kernel lacks it and the caller must kill pid by pid.
bool kill(const Group::State& state) noexcept;
bool populated(const Group::State& state) noexcept;
}  // namespace v2

// The v2 parent: enabling controllers in its cgroup.subtree_control, and the no-internal-process
// rule that may require jail to move itself into a leaf first. Reference-counted per parent
// within this process, so concurrent jails share one preparation and the last one undoes it.
namespace subtree {
// Makes `controllers` available to children of `parent`. `required` ones must succeed (else
// Error); optional ones (accounting) are skipped on failure. Returns those now enabled, and
// takes a reference on `parent` that release() must give back, also when it throws.
std::vector<std::string> prepare(const std::string& parent,
                                 const std::vector<std::string>& required,
                                 const std::vector<std::string>& optional);
// The parent jail moved itself out of, when `dir` is its own jail-supervisor-<pid> leaf: a new
// group goes beside the others there, not below jail's own leaf.
std::optional<std::string> home_of(const std::string& dir);
// Gives back a reference; the last one disables what jail enabled and moves jail back into
// `parent` if it had moved itself out. False (logged) when that could not be done.
bool release(const std::string& parent) noexcept;
}  // namespace subtree

}  // namespace jail::cgroup
