#include "spawn_support.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "jail/error.hpp"
#include "log.hpp"

namespace jail {

Pipe make_pipe(const char* what) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    const int err = errno;
    throw Error("pipe", err, fmt::format("cannot create {}: {}", what, std::strerror(err)));
  }
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

namespace {

bool is_regular_file(int fd) {
  struct stat info {};
  return ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
}

// gVisor writes to a donated regular file at an offset of its own, not the open file's shared
// one: in `{ jail --runtime runsc -- echo hi; echo after; } > out` the caller's next write lands
// over the tool's output ("hi" lost; `runsc do` loses it too). Relayed through a pipe, the
// supervisor's writes move the shared offset as any process's would.
bool relay_for_runsc(const Spec& spec) {
  return spec.runtime == Runtime::runsc && spec.stdio == Stdio::inherit && !spec.max_output_bytes &&
         (is_regular_file(STDOUT_FILENO) || is_regular_file(STDERR_FILENO));
}

}  // namespace

std::array<UniqueFd, 3> plumb_stdio(const Spec& spec, Process::State& state) {
  std::array<UniqueFd, 3> child_stdio;
  if (spec.stdio == Stdio::pipe) {
    for (int fd = 0; fd <= 2; ++fd) {
      Pipe pipe = make_pipe("a stdio pipe");
      const bool tool_reads = fd == 0;
      child_stdio[fd] = std::move(tool_reads ? pipe.read : pipe.write);
      state.stdio_pipes[fd] = std::move(tool_reads ? pipe.write : pipe.read);
    }
  } else if (spec.max_output_bytes || relay_for_runsc(spec)) {
    // The supervisor drains these and stops relaying at the cap (none for the runsc relay).
    for (int fd = 1; fd <= 2; ++fd) {
      Pipe pipe = make_pipe("an output pipe");
      child_stdio[fd] = std::move(pipe.write);
      state.output_sources[fd - 1] = std::move(pipe.read);
    }
    state.max_output_bytes = spec.max_output_bytes.value_or(UINT64_MAX);
  }
  if (spec.input == Input::none) {
    child_stdio[0].reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!child_stdio[0].valid()) {
      const int err = errno;
      throw Error(
          "stdio", err,
          fmt::format("cannot open /dev/null for the tool's stdin: {}", std::strerror(err)));
    }
    state.stdio_pipes[0].reset();  // nothing the caller writes could reach the tool
  }
  return child_stdio;
}

cgroup::Group make_cgroup(const Spec& spec) {
  const cgroup::Limits limits{spec.limits.memory_bytes, spec.limits.pids, spec.limits.cpus};
  try {
    return cgroup::Group::create(limits, spec.cgroup_parent);
  } catch (const cgroup::Error& error) {
    if (limits.any()) throw;
    jail::log().debug("no cgroup for accounting: {}", error.what());
    return {};
  }
}

void clone_into(clone_args& args, const cgroup::Group& group) {
  if (group.v2_fd() < 0) return;
  args.flags |= CLONE_INTO_CGROUP;
  args.cgroup = static_cast<std::uint64_t>(group.v2_fd());
}

void kill_and_reap(int pidfd, pid_t pid) {
  ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
  int status = 0;
  while (::waitpid(pid, &status, __WALL) < 0 && errno == EINTR) {
  }
}

}  // namespace jail
