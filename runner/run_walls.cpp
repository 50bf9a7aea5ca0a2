#include "run_walls.hpp"

#include <sstream>

namespace jail::runner {
namespace {

// Words filled into lines of at most `width`, every line after the first indented.
std::string wrapped(const std::string& text, std::size_t first_indent, std::size_t indent) {
  constexpr std::size_t width = 98;
  std::istringstream words(text);
  std::string out, line(first_indent, ' '), word;
  while (words >> word) {
    if (line.size() > indent && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = std::string(indent, ' ');
    }
    line += (line.size() == indent || line.size() == first_indent ? "" : " ") + word;
  }
  return out + line + "\n";
}

}  // namespace

// Each line restates docs/architecture.md (the child's steps, the baseline) and docs/usage.md
// (the flags' defaults); change them together.
const std::vector<Wall>& run_walls() {
  static const std::vector<Wall> walls = {
      {"network",
       "with --net none (the default) the tool's own network namespace has only lo: an "
       "AF_INET/AF_INET6 socket reaches nothing outside (--net-allow: only the named hosts, "
       "through jail's proxy; --net host: the host's network)"},
      {"network",
       "connect() to a Unix socket file reaches only sockets on the jail's own filesystems "
       "(/tmp, /dev/shm, a --tmpfs) or an --allow-socket path; the baseline refuses datagram "
       "and raw Unix sockets"},
      {"privileges",
       "the tool is one unprivileged id of its own user namespace, with every capability set "
       "empty and no_new_privs: setuid/setgid to another id, capset to gain a capability, "
       "mount, module loading, setting the clock and reboot fail even where the policy "
       "allows them, and set-user-ID files give nothing"},
      {"processes",
       "its own pid namespace: it sees and signals only the jail's processes; PID 1 is jail's "
       "reaper, which is not dumpable (no ptrace of it), and the whole jail ends with jail"},
      {"files",
       "a read-only root, a private /proc, a minimal /dev, /tmp a tmpfs (256M by default), no "
       "$HOME, the current directory read-only unless --bind .: an allowed write lands only in "
       "/tmp, /dev/shm and writable binds"},
      {"IPC",
       "its own IPC, UTS and cgroup namespaces: System V and POSIX IPC objects are shared with "
       "nothing outside the jail, and the hostname it may set is the jail's"},
      {"kernel interfaces",
       "the baseline (shipped/baseline.policy, compiled before every policy) kills clone and "
       "unshare with a namespace flag and io_uring, answers clone3 ENOSYS, and refuses the "
       "TIOCSTI/TIOCLINUX ioctls, set-user-ID and set-group-ID bits (chmod, open, creat, "
       "mknod…), device nodes and a seccomp listener of its own"},
      {"kernel interfaces",
       "other architectures (i386's int $0x80) and x32 syscalls kill the process before any "
       "rule"},
      {"processes",
       "its own session (setsid), with no controlling terminal: nothing typed into the caller's "
       "terminal; a terminal is relayed through a pty"},
  };
  return walls;
}

std::string_view run_walls_scope() {
  return "under the namespaces isolation, the default where a user namespace can be made; the "
         "Landlock mode (docs/landlock.md) and --runtime runsc (docs/runsc.md) differ";
}

std::string run_walls_text() {
  std::string out = wrapped(
      "Whatever the policy says, a jail run blocks this (" + std::string(run_walls_scope()) + "):",
      0, 2);
  for (const Wall& w : run_walls()) out += wrapped("- " + w.topic + ": " + w.text, 2, 4);
  return out;
}

nlohmann::json run_walls_json() {
  nlohmann::json walls = nlohmann::json::array();
  for (const Wall& w : run_walls()) walls.push_back({{"topic", w.topic}, {"text", w.text}});
  return {{"scope", run_walls_scope()}, {"walls", walls}};
}

}  // namespace jail::runner
