#include "spec_check.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "egress/allow_entry.hpp"
#include "jail/error.hpp"

namespace jail {
namespace {

// What makes a hostname other than RFC 1123's letters, digits, '-' and '.' (not first or last),
// or empty. It also goes into the jail's /etc/hosts, where a line break added an entry of the
// caller's choosing ("pypi.org" → any address). The offending byte is named, not printed.
std::string hostname_fault(const std::string& name) {
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto byte = static_cast<unsigned char>(name[i]);
    if (std::isalnum(byte) == 0 && byte != '-' && byte != '.')
      return fmt::format("its byte {} is 0x{:02x}", i + 1, byte);
  }
  const auto edge = [](char c) { return c == '-' || c == '.'; };
  if (edge(name.front()) || edge(name.back())) return "it starts or ends with '-' or '.'";
  // Each dot-separated label: 1 to 63 characters, not starting or ending with '-'.
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('.', start);
    if (end == std::string::npos) end = name.size();
    const std::string_view label(name.data() + start, end - start);
    if (label.empty()) return "it has an empty label ('..')";
    if (label.size() > 63) return fmt::format("its label '{}' is longer than 63", label);
    if (label.front() == '-' || label.back() == '-')
      return fmt::format("its label '{}' starts or ends with '-'", label);
    start = end + 1;
  }
  return {};
}

std::string errno_text(int err) {
  return fmt::format("{}: {}", strerrorname_np(err), std::strerror(err));
}

// One thing wrong with the Spec: the step and errno a caller can switch on, and the sentence.
struct Problem {
  std::string step;
  int err;
  std::string text;
};

class Problems {
 public:
  void add(std::string text, const char* step = "spec", int err = EINVAL) {
    list_.push_back({step, err, std::move(text)});
  }
  void push_back(std::string text) { add(std::move(text)); }
  template <typename... Args>
  void emplace_back(Args&&... args) {
    add(std::string(std::forward<Args>(args)...));
  }
  [[nodiscard]] bool empty() const { return list_.empty(); }
  // Every problem in one message, so the user fixes them all in one go; the first one's step
  // and errno stand for the whole.
  [[noreturn]] void raise() const {
    std::string message = list_.front().text;
    for (std::size_t i = 1; i < list_.size(); ++i) message += "\njail: " + list_[i].text;
    throw Error(list_.front().step, list_.front().err, message);
  }

 private:
  std::vector<Problem> list_;
};

void check_mount(const Mount& mount, Problems& problems) {
  const std::string where = mount.origin.empty() ? "" : fmt::format(" (from {})", mount.origin);
  const std::string target = normalize_jail_path(mount.target);
  if (target.empty()) {
    problems.push_back(
        fmt::format("mount target '{}' must be an absolute path inside the jail without '..'{}",
                    mount.target, where));
  } else if (target == "/") {
    problems.push_back(fmt::format(
        "cannot mount over the jail's root '/'{}: use --rootfs DIR for a prepared root", where));
  } else if (target == "/proc" || target == "/dev") {
    // jail makes these itself (a private proc, a /dev of null, zero, random, tty and pts) and
    // seals them read-only: over them a tmpfs came out empty and unwritable.
    problems.push_back(fmt::format(
        "cannot mount over the jail's own {}{}: it is made for the jail; mount below it instead",
        target, where));
  }
  if (mount.kind == MountKind::tmpfs) {
    if (mount.size_bytes && *mount.size_bytes == 0) {
      problems.push_back(fmt::format("tmpfs at {} has size 0{}", mount.target, where));
    }
    return;
  }
  struct stat info {};
  if (mount.source.empty() || mount.source.front() != '/') {
    problems.push_back(
        fmt::format("bind source '{}' must be an absolute path{}", mount.source, where));
  } else if (::stat(mount.source.c_str(), &info) != 0) {
    const int err = errno;
    problems.add(
        fmt::format("cannot bind {} at {}: {}: {}{}", mount.source, mount.target, errno_text(err),
                    err == ENOENT ? "the source does not exist" : "the source cannot be reached",
                    where),
        "open_bind_source", err);
  }
}

}  // namespace

bool asks_for_root_ids(const Spec& spec) {
  return (spec.uid && *spec.uid == 0) || (spec.gid && *spec.gid == 0);
}

bool jail_path_within(const std::string& path, const std::string& dir) {
  return dir == "/" || path == dir || path.starts_with(dir + "/");
}

std::string normalize_jail_path(const std::string& path) {
  if (path.empty() || path.front() != '/') return {};
  std::string result;
  std::istringstream parts(path);
  std::string part;
  while (std::getline(parts, part, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return {};
    result += '/';
    result += part;
  }
  return result.empty() ? "/" : result;
}

namespace {

// The fewest --pids a runsc run is given (see check_spec).
constexpr std::uint64_t kRunscMinPids = 64;

// overlayfs takes its lower layer as a ':'-separated list with '\\' escapes; such paths would
// name other layers, so they are refused rather than escaped.
void check_dry_run(const Spec& spec, Problems& problems) {
  if (spec.runtime == Runtime::runsc) {
    problems.emplace_back(
        "--dry-run works with the native runtime only: gVisor's overlay does not "
        "keep the changes for review; leave out --runtime runsc");
  }
  for (const Mount& mount : spec.mounts) {
    if (mount.kind == MountKind::bind && mount.source.find_first_of(":\\,") != std::string::npos) {
      problems.push_back(
          fmt::format("cannot dry-run --bind {}: a path with ':', ',' or '\\' cannot "
                      "be an overlay layer; bind a directory whose path has none ({})",
                      mount.source, mount.origin));
    }
  }
}

// What the native runtime can do and runsc cannot, or not safely: refused before anything starts.
void check_runsc(const Spec& spec, Problems& problems) {
  // runsc, its gofer and its sentry are host tasks in the jail's cgroup: ~60 of them for a bare
  // start here, 12-15 more for each process of the tool. Starved of them, gVisor does not always
  // fail: a gofer that dies of it can leave the sandbox waiting for ever, so too small a limit is
  // refused.
  if (spec.limits.pids && *spec.limits.pids < kRunscMinPids) {
    problems.push_back(fmt::format(
        "--pids {} is too few for --runtime runsc: gVisor's own threads and processes count "
        "against it (about 60 to start, 12-15 more for each process of the tool); give it at "
        "least {}",
        *spec.limits.pids, kRunscMinPids));
  }
  // Under gVisor the tool's ids are the host's for every file it reaches through a mount: runsc's
  // gofer serves them as host root and the sentry checks the tool's uid and gid against their
  // host owners. As uid or gid 0 the tool would own root's files in /usr, /etc/ssl/private and
  // any --bind, which a native jail's tool (nobody on the host) cannot read.
  if (asks_for_root_ids(spec)) {
    problems.emplace_back(
        "--uid 0 or --gid 0 with --runtime runsc: under gVisor the tool's ids are the host's for "
        "the files it can reach, so it would read root's files (such as /etc/ssl/private); give "
        "it another uid and gid, or use the native runtime");
  }
  // runsc is handed pipes, never the caller's terminal or a pty of jail's (it would chown it to
  // nobody, see spawn_support.cpp): the tool cannot have a terminal there.
  if (spec.stdio == Stdio::pty) {
    problems.emplace_back(
        "a terminal for the tool (--tty always, Stdio::pty) is not available with --runtime "
        "runsc: its stdio is relayed through pipes; leave out --tty always, or use the native "
        "runtime");
  }
  // gVisor's /dev is its own (its devices, /dev/shm, /dev/pts): a mount there would be dropped
  // from the bundle without a word.
  for (const Mount& mount : spec.mounts) {
    if (jail_path_within(normalize_jail_path(mount.target), "/dev")) {
      problems.push_back(
          fmt::format("{}: with --runtime runsc nothing can be mounted under /dev (gVisor's "
                      "/dev is its own); mount it elsewhere, or use the native runtime",
                      mount.origin));
    }
  }
  // gVisor shows the tool the RLIMIT_CPU of the bundle's process.rlimits (`ulimit -t` prints
  // it) but never arms it: a spinning tool ran on for ever where a native jail ends it after the
  // limit. (It does arm one the tool sets itself.) Refused rather than not enforced.
  const bool cpu_rlimit =
      std::any_of(spec.limits.rlimits.begin(), spec.limits.rlimits.end(),
                  [](const Rlimit& limit) { return limit.resource == RLIMIT_CPU; });
  if (spec.limits.cpu_time || cpu_rlimit) {
    problems.emplace_back(
        "--cpu-time (RLIMIT_CPU) is not enforced under --runtime runsc: gVisor shows the limit "
        "to the tool but never ends it; bound the run with --timeout, or use the native runtime");
  }
  if (spec.lookups == LookupTrace::record) {
    problems.emplace_back(
        "recording the tool's path lookups needs the native runtime: under runsc its syscalls go "
        "to gVisor's kernel, not through jail's supervisor");
  }
  // runsc's sandbox network has no door jail can hand to its egress proxy: refused, never a
  // sandbox that reaches everything or nothing.
  if (!spec.net_allow.empty()) {
    problems.emplace_back(
        "--net-allow is not available with --runtime runsc: gVisor's network has no way out "
        "through jail's egress proxy; use the native runtime, or --net none");
  }
  if (spec.seccomp_mode == SeccompMode::learn) {
    problems.emplace_back(
        "learning a policy (SeccompMode::learn, jail policy learn) needs the native runtime: "
        "under runsc the tool's syscalls go to gVisor's kernel, not through jail's supervisor, "
        "so nothing would be learned");
  }
}

}  // namespace

// A mount whose target lies in an earlier writable bind and does not exist there: jail would
// have to make the mount point through that bind, on the host. (A dry run's layer takes it in
// its session instead; a read-only bind refuses it with EROFS, which the child reports.)
namespace {

// --net-allow opens one way out of the jail's own network; with the host's there is nothing to
// narrow.
void check_egress(const Spec& spec, Problems& problems) {
  if (spec.net_allow.empty()) {
    if (spec.net_allow_private) {
      problems.emplace_back(
          "--net-allow-private opens private addresses to the names of --net-allow; give the "
          "names with --net-allow too");
    }
    return;
  }
  for (const std::string& entry : spec.net_allow) {
    try {
      egress::check_allow_entry(entry);
    } catch (const egress::EntryError& error) {
      problems.emplace_back(error.what());
    }
  }
  if (spec.net == Net::host) {
    problems.emplace_back(
        "--net-allow gives the tool its own network whose one way out is jail's proxy; with "
        "--net host it would reach everything anyway: leave out --net host");
  }
}

}  // namespace

// What --allow-socket and --allow-abstract name must be a socket the broker can find, where it
// checks connects at all.
void check_socket_access(const Spec& spec, Problems& problems) {
  for (const std::string& path : spec.allow_sockets) {
    if (normalize_jail_path(path).empty()) {
      problems.push_back(fmt::format(
          "--allow-socket '{}' must be an absolute path in the jail without '..' (where a bind "
          "shows the socket)",
          path));
    }
  }
  for (const std::string& name : spec.allow_abstract) {
    if (name.empty() || name.size() > sizeof(sockaddr_un::sun_path) - 1) {
      problems.push_back(fmt::format(
          "--allow-abstract '{}' must be an abstract socket name of 1 to {} bytes, without its "
          "leading NUL",
          name, sizeof(sockaddr_un::sun_path) - 1));
    }
  }
  if (!spec.allow_abstract.empty() && spec.net != Net::host) {
    problems.emplace_back(
        "--allow-abstract reaches the host's abstract sockets, which only --net host can: in the "
        "jail's own network every abstract name is the jail's already");
  }
  const bool any = !spec.allow_sockets.empty() || !spec.allow_abstract.empty();
  if (any && spec.runtime == Runtime::runsc) {
    problems.emplace_back(
        "--allow-socket and --allow-abstract are for the native runtime: gVisor reaches no host "
        "socket from a sandbox");
  } else if (any && spec.policy == kNoPolicy && spec.seccomp_mode == SeccompMode::enforce) {
    problems.emplace_back(
        "--allow-socket and --allow-abstract need a seccomp policy (connects reach the "
        "supervisor through it); with --policy none every socket is open, so leave them out");
  }
}

void check_mount_points_in_binds(const Spec& spec, Problems& problems) {
  if (spec.dry_run) return;
  for (std::size_t i = 0; i < spec.mounts.size(); ++i) {
    const std::string target = normalize_jail_path(spec.mounts[i].target);
    for (std::size_t j = i; j-- > 0;) {
      const Mount& outer = spec.mounts[j];
      const std::string outer_target = normalize_jail_path(outer.target);
      if (outer.kind != MountKind::bind || target == outer_target ||
          !jail_path_within(target, outer_target)) {
        continue;
      }
      const std::string host =
          outer.source + target.substr(outer_target == "/" ? 0 : outer_target.size());
      struct stat info {};
      if (::lstat(host.c_str(), &info) != 0) {
        problems.push_back(fmt::format(
            "the mount point {} of {} would have to be made on the host, as {}, because the "
            "writable bind of {} shows it there: create it first, or mount elsewhere",
            spec.mounts[i].target,
            spec.mounts[i].source.empty() ? "a tmpfs" : spec.mounts[i].source, host, outer.source));
      }
      break;
    }
  }
}

void check_spec(const Spec& spec) {
  Problems problems;
  if (spec.argv.empty() || spec.argv.front().empty()) {
    problems.emplace_back("no command to run: put it after '--', e.g. jail -- python3 script.py");
  }
  for (const auto& entry : spec.env) {
    if (entry.find('=') == std::string::npos || entry.front() == '=') {
      problems.push_back(fmt::format("environment entry '{}' is not KEY=VALUE", entry));
    }
  }
  if (spec.hostname.empty() || spec.hostname.size() > 64) {
    problems.push_back(fmt::format("the hostname must be 1 to 64 characters; this one has {}",
                                   spec.hostname.size()));
  } else if (const std::string fault = hostname_fault(spec.hostname); !fault.empty()) {
    problems.push_back(fmt::format(
        "the hostname must be labels of letters, digits and '-' joined by '.' (RFC 1123), each "
        "1 to 63 long and not starting or ending with '-': {}",
        fault));
  }
  if (spec.cgroup_parent && normalize_jail_path(*spec.cgroup_parent).empty()) {
    // A cgroup path is read below each hierarchy's mount: '..' would make jail mkdir (and its
    // stale-run sweep rmdir) outside the cgroup file system.
    problems.push_back(fmt::format(
        "cgroup parent '{}' must be an absolute cgroup path without '..', like /jails or the "
        "one /proc/self/cgroup shows",
        *spec.cgroup_parent));
  }
  if (normalize_jail_path(spec.cwd).empty()) {
    problems.push_back(
        fmt::format("working directory '{}' must be an absolute path without '..'", spec.cwd));
  }
  if (spec.max_output_bytes && (*spec.max_output_bytes == 0 || spec.stdio == Stdio::pipe)) {
    problems.emplace_back(
        "max_output_bytes must be greater than 0 and is for Stdio::inherit or pty (with pipes, "
        "the caller reads and can stop reading itself)");
  }
  if (spec.tmp_size_bytes == 0) problems.emplace_back("the size of /tmp must be greater than 0");
  if (spec.rootfs) {
    struct stat info {};
    if (::stat(spec.rootfs->c_str(), &info) != 0) {
      const int err = errno;
      problems.add(fmt::format("cannot use --rootfs {}: {}", *spec.rootfs, errno_text(err)),
                   "stage_root", err);
    } else if (!S_ISDIR(info.st_mode)) {
      problems.push_back(
          fmt::format("cannot use --rootfs {}: it is not a directory", *spec.rootfs));
    }
  }
  for (const Mount& mount : spec.mounts) check_mount(mount, problems);
  check_mount_points_in_binds(spec, problems);
  check_socket_access(spec, problems);
  check_egress(spec, problems);
  if (spec.runtime == Runtime::runsc) check_runsc(spec, problems);
  if (spec.lookups == LookupTrace::record && spec.policy == kNoPolicy &&
      spec.seccomp_mode == SeccompMode::enforce) {
    problems.emplace_back(
        "recording the tool's path lookups needs a seccomp policy (the lookups reach the "
        "supervisor "
        "through it); --policy none has none");
  }
  if (spec.dry_run) check_dry_run(spec, problems);
  if (!problems.empty()) problems.raise();
}

}  // namespace jail
