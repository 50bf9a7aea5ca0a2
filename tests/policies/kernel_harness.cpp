#include "kernel_harness.hpp"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

namespace jail::policy::testing {
namespace {

bool install(const Program& program) {
  sock_fprog fprog{static_cast<unsigned short>(program.instructions.size()),
                   const_cast<sock_filter*>(program.instructions.data())};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
  return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) == 0;
}

ChildEnd finish(pid_t pid, int read_fd) {
  ChildEnd end;
  char buf[4096];
  ssize_t n;
  while ((n = read(read_fd, buf, sizeof buf)) > 0) end.output.append(buf, static_cast<size_t>(n));
  close(read_fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    end.exited = true;
    end.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    end.signal = WTERMSIG(status);
  }
  return end;
}

}  // namespace

ChildEnd run_filtered(const Program& program, const std::function<int(int)>& body) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) std::abort();
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (!install(program)) _exit(kInstallFailed);
    const int code = body(fds[1]);
    // exit_group directly, not _exit: under AddressSanitizer every call of a noreturn function
    // is preceded by __asan_handle_no_return, which calls sigaltstack(2), and the filters under
    // test deny it (errno or kill), so ASan's own check failed in the child instead of the
    // child reporting the outcome. syscall() is not noreturn, so nothing is inserted before it.
    syscall(SYS_exit_group, code);
    _exit(code);  // only when the filter refuses exit_group too
  }
  close(fds[1]);
  return finish(pid, fds[0]);
}

ChildEnd run_program(const Program& program, const std::vector<std::string>& argv,
                     const std::string& cwd, const std::string& stdin_text) {
  int in[2];
  if (pipe2(in, O_CLOEXEC) != 0) std::abort();
  if (write(in[1], stdin_text.data(), stdin_text.size()) != static_cast<ssize_t>(stdin_text.size()))
    std::abort();
  close(in[1]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) std::abort();
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    dup2(in[0], 0);
    if (chdir(cwd.c_str()) != 0) _exit(kInstallFailed);
    if (!install(program)) _exit(kInstallFailed);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  close(in[0]);
  return finish(pid, fds[0]);
}

int syscall_outcome(const Program& program, long nr, std::vector<unsigned long> args) {
  args.resize(6, 0);
  ChildEnd end = run_filtered(program, [&](int) {
    long r = syscall(nr, args[0], args[1], args[2], args[3], args[4], args[5]);
    return r == -1 ? errno : 0;
  });
  if (!end.exited) return -end.signal;
  return end.code;
}

}  // namespace jail::policy::testing
