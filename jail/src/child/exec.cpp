// Child side, after clone: no allocation, no exceptions, no logging. See plan.hpp.
#include "child/exec.hpp"

#include <fcntl.h>
#include <linux/limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "child/fail.hpp"

namespace jail::child {
namespace {

[[noreturn]] void exec_failed(const Plan& plan, int err, int detail = -1) {
  send_report(plan.report_fd, ReportKind::exec_failed, Step::exec, err, detail);
  const int status = err == ENOENT ? 127 : 126;
  if (plan.exits_watched) raw::exit_thread(status);
  raw::exit_group(status);
}

// Calls `visit(candidate)` with each file execvp would try for the bare name `file` on `path`,
// in order, until it returns false; `candidate` is a stack buffer (no allocation).
template <typename Visit>
void for_each_path_candidate(const char* path, const char* file, Visit visit) {
  const std::size_t file_length = std::strlen(file);
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
      if (!visit(static_cast<const char*>(candidate))) return;
    }
    if (*end == '\0') return;
    entry = end;
  }
}

const char* search_path(const Plan& plan) {
  return plan.path_env != nullptr ? plan.path_env : kPathWithoutPathVariable;
}

}  // namespace

CommandFile find_command_file(const Plan& plan) {
  const char* file = plan.argv[0];
  bool found = false;
  if (std::strchr(file, '/') != nullptr) {
    found = ::faccessat(AT_FDCWD, file, F_OK, 0) == 0;
  } else {
    for_each_path_candidate(search_path(plan), file, [&](const char* candidate) {
      found = ::faccessat(AT_FDCWD, candidate, F_OK, 0) == 0;
      return !found;
    });
  }
  return found ? CommandFile::present : CommandFile::absent;
}

void exec_tool(const Plan& plan, CommandFile command) {
  const int enoent_detail = command == CommandFile::present ? kExecCommandExists : -1;
  const char* file = plan.argv[0];
  if (std::strchr(file, '/') != nullptr) {
    ::execve(file, plan.argv, plan.envp);
    const int err = errno;
    exec_failed(plan, err, err == ENOENT ? enoent_detail : -1);
  }
  // execvp's rules: try each PATH entry; remember EACCES but keep looking; a missing entry or
  // directory is not an error; anything else (ENOEXEC, ETXTBSY, …) stops the search.
  bool saw_eacces = false;
  for_each_path_candidate(search_path(plan), file, [&](const char* candidate) {
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
    return true;
  });
  // ENOENT although a candidate was there: the first one found could not be loaded.
  if (saw_eacces) exec_failed(plan, EACCES);
  exec_failed(plan, ENOENT, enoent_detail);
}

}  // namespace jail::child
