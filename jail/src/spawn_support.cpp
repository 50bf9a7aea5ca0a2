#include "spawn_support.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
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

Pipe make_report_socket() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    const int err = errno;
    throw Error("pipe", err,
                fmt::format("cannot create the report socket: {}", std::strerror(err)));
  }
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

namespace {

// runsc starts gVisor's sandbox as nobody in a user namespace of its own, and so first chowns
// the stdio it is given to nobody (65534): the caller's terminal, /dev/null, the file the output
// is redirected to would stay so after the run. Only an anonymous pipe or socket — gone with its
// last fd, its owner seen by no one — is handed over as it is; anything else goes through a pipe
// of jail's. That also keeps a redirected file's offset right: gVisor writes a donated regular
// file at an offset of its own, so in `{ jail --runtime runsc -- echo hi; echo after; } > out`
// the caller's next write would land over the tool's output.
bool runsc_may_be_given(int fd) {
  struct statfs fs {};
  return ::fstatfs(fd, &fs) == 0 && (fs.f_type == PIPEFS_MAGIC || fs.f_type == SOCKFS_MAGIC);
}

bool inherits_under_runsc(const Spec& spec) {
  return spec.runtime == Runtime::runsc && spec.stdio == Stdio::inherit;
}

bool relay_output_for_runsc(const Spec& spec) {
  return inherits_under_runsc(spec) &&
         (!runsc_may_be_given(STDOUT_FILENO) || !runsc_may_be_given(STDERR_FILENO));
}

// The caller's `a` and `b` write to the same pipe, socket, terminal or file.
bool same_destination(int a, int b) {
  struct stat first {};
  struct stat second {};
  return ::fstat(a, &first) == 0 && ::fstat(b, &second) == 0 && first.st_dev == second.st_dev &&
         first.st_ino == second.st_ino;
}

// What the tool reads with Input::none: /dev/null natively; under runsc, which would chown
// /dev/null itself, a pipe whose write end is already closed.
UniqueFd empty_input(const Spec& spec) {
  if (spec.runtime == Runtime::runsc) return std::move(make_pipe("the tool's empty stdin").read);
  UniqueFd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!null.valid()) {
    const int err = errno;
    throw Error("stdio", err,
                fmt::format("cannot open /dev/null for the tool's stdin: {}", std::strerror(err)));
  }
  return null;
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
  } else if (spec.max_output_bytes || relay_output_for_runsc(spec)) {
    // The supervisor drains these and stops relaying at the cap (none for the runsc relay).
    if (same_destination(STDOUT_FILENO, STDERR_FILENO)) {
      // `2>&1`: one pipe for both, so that the caller reads them in the order the tool wrote
      // them, as without the relay; two pipes drained in turn would reorder them.
      Pipe pipe = make_pipe("an output pipe");
      child_stdio[2].reset(::fcntl(pipe.write.get(), F_DUPFD_CLOEXEC, 0));
      if (!child_stdio[2].valid()) {
        const int err = errno;
        throw Error("pipe", err,
                    fmt::format("cannot duplicate the tool's output pipe: {}", std::strerror(err)));
      }
      child_stdio[1] = std::move(pipe.write);
      state.output_sources[0] = std::move(pipe.read);
    } else {
      for (int fd = 1; fd <= 2; ++fd) {
        Pipe pipe = make_pipe("an output pipe");
        child_stdio[fd] = std::move(pipe.write);
        state.output_sources[fd - 1] = std::move(pipe.read);
      }
    }
    state.max_output_bytes = spec.max_output_bytes.value_or(UINT64_MAX);
  }
  if (spec.input == Input::none) {
    child_stdio[0] = empty_input(spec);
    state.stdio_pipes[0].reset();  // nothing the caller writes could reach the tool
  } else if (inherits_under_runsc(spec) && !runsc_may_be_given(STDIN_FILENO)) {
    Pipe pipe = make_pipe("the tool's stdin pipe");
    state.input_spare_reader.reset(::fcntl(pipe.read.get(), F_DUPFD_CLOEXEC, 0));
    if (!state.input_spare_reader.valid()) {
      const int err = errno;
      throw Error("pipe", err,
                  fmt::format("cannot duplicate the tool's stdin pipe: {}", std::strerror(err)));
    }
    child_stdio[0] = std::move(pipe.read);
    state.input_sink = std::move(pipe.write);
  }
  return child_stdio;
}

cgroup::Group make_cgroup(const Spec& spec) {
  const cgroup::Limits limits{spec.limits.memory_bytes, spec.limits.pids, spec.limits.cpus};
  try {
    return cgroup::Group::create(limits, spec.cgroup_parent);
  } catch (const cgroup::Error& error) {
    // An explicit --cgroup-parent is where the caller asked the jail to be (under that cgroup's
    // limits): a typo must not run it outside them.
    if (limits.any() || spec.cgroup_parent) throw;
    jail::log().debug("no cgroup for accounting: {}", error.what());
    return {};
  }
}

void clone_into(clone_args& args, const cgroup::Group& group) {
  if (group.v2_fd() < 0) return;
  args.flags |= CLONE_INTO_CGROUP;
  args.cgroup = static_cast<std::uint64_t>(group.v2_fd());
}

void reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, __WALL) < 0 && errno == EINTR) {
  }
}

void kill_and_reap(int pidfd, pid_t pid) {
  ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
  reap(pid);
}

}  // namespace jail
