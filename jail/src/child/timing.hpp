// --trace-timing: the phases of a run, in the order they happen, and how the child side marks
// them. A mark is a CLOCK_MONOTONIC timestamp sent as one fixed-size Report record: no
// allocation, and nothing at all when the flag was not given.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <ctime>

#include "child/plan.hpp"
#include "child/raw_syscall.hpp"
#include "child/report.hpp"

namespace jail::child {

// In causal order: each phase happens after the one before it (the child's phases follow the
// parent's go byte; the supervisor's follow the tool's exit), so times never decrease.
enum class Phase : std::int32_t {
  launch,           // parent: launch() entered
  spec_checked,     // parent: the Spec validated, the plan (mounts, argv, env) built
  policy_compiled,  // parent: the seccomp policy parsed and compiled to BPF
  cgroup_created,   // parent: the jail's cgroup made and its limits written
  cloned,           // parent: clone3 into every namespace returned (runsc: runsc started)
  bundle_written,  // parent, runsc: the policy compiled and the bundle laid out, while runsc starts
  runsc_released,  // parent, runsc: runsc's start gate opened (runsc/start_gate.hpp)
  id_maps_written,   // parent: uid/gid maps written (v1: cgroup attached); go byte sent
  released,          // init: the go byte read
  mounts_done,       // init: every mount of the new root made, sealed read-only
  pivot_root_done,   // init: pivot_root done, the old root detached
  namespaces_set,    // init: hostname set, lo up, signals set up
  identity_dropped,  // init: uid/gid changed, capabilities dropped, cwd entered
  seccomp_loaded,    // tool: the filter installed
  exec,              // tool: execve called
  tool_exited,       // init: the tool reaped
  jail_exited,       // supervisor: the init's exit seen (runsc: runsc run's)
  cgroup_removed,    // supervisor: usage read, the cgroup removed
  count,
};

inline constexpr const char* kPhaseNames[] = {
    "launch",          "spec checked",   "policy compiled",  "cgroup created", "cloned",
    "bundle written",  "runsc released", "id maps written",  "released",       "mounts done",
    "pivot_root done", "namespaces set", "identity dropped", "seccomp loaded", "exec",
    "tool exited",     "jail exited",    "cgroup removed",
};
static_assert(sizeof kPhaseNames / sizeof kPhaseNames[0] == static_cast<int>(Phase::count));

[[gnu::always_inline]] inline std::int64_t monotonic_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

// Also after the init let go of the caller's memory (child/caller_memory.hpp): the write is raw,
// and the clock is the vDSO's through a C library function every earlier mark of the run has
// already bound. The tool marks under its policy too, which need allow only write.
[[gnu::always_inline]] inline void mark(bool trace_timing, int report_fd, Phase phase) {
  if (!trace_timing) return;
  Report report{ReportKind::timing, static_cast<std::int32_t>(phase), 0, 0};
  report.time_ns = monotonic_ns();
  while (raw::call(SYS_write, report_fd, &report, sizeof report) == -EINTR) {
  }
}

inline void mark(const Plan& plan, Phase phase) {
  mark(plan.trace_timing, plan.report_fd, phase);
}

}  // namespace jail::child
