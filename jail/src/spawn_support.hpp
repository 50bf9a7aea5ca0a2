// What both back ends (the native jail and runsc) do the same way around their clone3: the report
// socket, the tool's stdio as the Spec asks for it, the cgroup the child is born into, and killing
// the child when a step after clone fails. One copy, so the two cannot drift apart.
#pragma once

#include <linux/sched.h>
#include <sys/types.h>

#include <array>

#include "cgroup/cgroup.hpp"
#include "jail/spec.hpp"
#include "process_state.hpp"
#include "unique_fd.hpp"

namespace jail {

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

// An O_CLOEXEC pipe; throws jail::Error naming `what`.
[[nodiscard]] Pipe make_pipe(const char* what);

// The child side's report socket (child/report.hpp): one record per message, never torn, and
// able to carry the pty master and seccomp listener. `write` is the child's end.
[[nodiscard]] Pipe make_report_socket();

// The child's ends of its stdio (-1: keep the caller's), closed by the parent after clone. The
// other ends go into `state`: the caller's with Stdio::pipe, the supervisor's with
// max_output_bytes, or a relay's under runsc (which must not be handed the caller's own; see
// spawn_support.cpp). With Input::none the child reads /dev/null (under runsc an empty pipe) and
// the caller gets no stdin pipe.
[[nodiscard]] std::array<UniqueFd, 3> plumb_stdio(const Spec& spec, Process::State& state);

// A cgroup for the limits asked for, and for accounting when none were. Without limits, a host
// where no cgroup can be made (a non-root caller without delegation) still runs the tool.
[[nodiscard]] cgroup::Group make_cgroup(const Spec& spec);

// On v2 the child is born inside its cgroup (CLONE_INTO_CGROUP): no moment outside the limits.
void clone_into(clone_args& args, const cgroup::Group& group);

// Waits for `pid` (a child of this process) to end and reaps it.
void reap(pid_t pid);
void kill_and_reap(int pidfd, pid_t pid);

}  // namespace jail
