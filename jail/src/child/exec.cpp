// Child side, after clone: no allocation, no exceptions, no logging. See plan.hpp.
#include "child/exec.hpp"

#include <linux/limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "child/fail.hpp"

namespace jail::child {
namespace {

[[noreturn]] void exec_failed(const Plan& plan, int err, int detail = -1) {
  send_report(plan.report_fd, ReportKind::exec_failed, Step::exec, err, detail);
  ::_exit(err == ENOENT ? 127 : 126);
}

}  // namespace

void exec_tool(const Plan& plan, bool command_exists) {
  const char* file = plan.argv[0];
  if (std::strchr(file, '/') != nullptr) {
    ::execve(file, plan.argv, plan.envp);
    const int err = errno;
    exec_failed(plan, err, err == ENOENT && command_exists ? kExecCommandExists : -1);
  }
  // execvp's rules: try each PATH entry; remember EACCES but keep looking; a missing entry or
  // directory is not an error; anything else (ENOEXEC, ETXTBSY, …) stops the search.
  const std::size_t file_length = std::strlen(file);
  const char* path = plan.path_env != nullptr ? plan.path_env : "/usr/bin:/bin";
  bool saw_eacces = false;
  char candidate[PATH_MAX];
  for (const char* entry = path;; ++entry) {
    const char* end = std::strchr(entry, ':');
    if (end == nullptr) end = entry + std::strlen(entry);
    std::size_t dir_length = static_cast<std::size_t>(end - entry);
    const char* dir = entry;
    if (dir_length == 0) {  // an empty entry means the working directory
      dir = ".";
      dir_length = 1;
    }
    if (dir_length + 1 + file_length < sizeof candidate) {
      std::memcpy(candidate, dir, dir_length);
      candidate[dir_length] = '/';
      std::memcpy(candidate + dir_length + 1, file, file_length + 1);
      ::execve(candidate, plan.argv, plan.envp);
      switch (errno) {
        case EACCES:
          saw_eacces = true;
          break;
        case ENOENT:
        case ENOTDIR:
        case ESTALE:
        case ENODEV:
        case ETIMEDOUT:
        case ENAMETOOLONG:
          break;
        default:
          exec_failed(plan, errno);
      }
    }
    if (*end == '\0') break;
    entry = end;
  }
  exec_failed(plan, saw_eacces ? EACCES : ENOENT);
}

}  // namespace jail::child
