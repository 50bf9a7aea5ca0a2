// What the host's /proc says of a process, for tests that watch a jail from outside.
#pragma once

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace jail_test {

// The whole of a /proc file, "" when it cannot be read. By read(2): a process that is reaped
// while its file is read gives ESRCH, on which std::ifstream's buffer throws.
inline std::string proc_file(const std::string& path) {
  std::string text;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

// user + system CPU time of `pid` so far, in seconds; -1 when it cannot be read.
inline double cpu_seconds(pid_t pid) {
  const std::string text = proc_file("/proc/" + std::to_string(pid) + "/stat");
  if (text.rfind(')') == std::string::npos) return -1;
  // Fields after the command name (which may hold spaces) start after the last ')'.
  std::istringstream rest(text.substr(text.rfind(')') + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// The state letter of `pid` in /proc/<pid>/stat ('R', 'S', 'Z', …); 0 once it is gone (reaped).
inline char process_state(pid_t pid) {
  const std::string text = proc_file("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t paren = text.rfind(')');
  if (paren == std::string::npos || paren + 2 >= text.size()) return 0;
  return text[paren + 2];
}

// Whether `pid` has ended: reaped, or a zombie no one has reaped yet.
inline bool process_ended(pid_t pid) {
  const char state = process_state(pid);
  return state == 0 || state == 'Z' || state == 'X';
}

// The command line of `pid`, arguments separated by NUL as in /proc; empty once it has gone.
inline std::string command_line(pid_t pid) {
  return proc_file("/proc/" + std::to_string(pid) + "/cmdline");
}

// Every live (not zombie) descendant of `root` on the host, by the parent pids in /proc.
inline std::vector<pid_t> descendants(pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string text = proc_file(entry.path() / "stat");
    const std::size_t paren = text.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(text.substr(paren + 1));
    char state = 0;
    pid_t ppid = 0;
    if (!(rest >> state >> ppid) || state == 'Z' || state == 'X') continue;
    children[ppid].push_back(static_cast<pid_t>(std::stol(name)));
  }
  std::vector<pid_t> found;
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    const pid_t parent = todo.back();
    todo.pop_back();
    for (const pid_t child : children[parent]) {
      found.push_back(child);
      todo.push_back(child);
    }
  }
  return found;
}

}  // namespace jail_test
