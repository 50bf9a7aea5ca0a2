#include "seccomp/connect_broker.hpp"

#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "child/syscalls.hpp"
#include "jail/byte_text.hpp"
#include "mountinfo.hpp"
#include "seccomp/reroute.hpp"
#include "seccomp/tool_memory.hpp"

namespace jail {
namespace {

#ifndef PIDFD_THREAD
constexpr unsigned kPidfdThread = O_EXCL;  // Linux 6.9: a pidfd of the thread, not its group
#else
constexpr unsigned kPidfdThread = PIDFD_THREAD;
#endif

// Inside the tool's root, as the kernel would resolve the path for the tool; no magic link
// (/proc/self/... would be the supervisor's own).
constexpr unsigned long long kInJail = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;

// The calling thread's descriptor `fd`: from its own table (threads made without CLONE_FILES
// have one of their own). Returns the errno on failure.
int take_descriptor(pid_t tid, int fd, UniqueFd& out) {
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, tid, kPidfdThread)));
  if (!pidfd.valid() && errno == EINVAL) {
    pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, tid, 0)));  // before Linux 6.9
  }
  if (!pidfd.valid()) return errno;
  out.reset(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0)));
  return out.valid() ? 0 : errno;
}

// The address the tool passed, read once; an errno when the kernel would fail it for that.
int read_address(pid_t tid, std::uint64_t at, std::uint64_t length_arg,
                 std::vector<std::byte>& out) {
  const auto length = static_cast<std::int32_t>(length_arg & 0xffffffffU);  // an int
  if (length < 0 || static_cast<std::size_t>(length) > sizeof(sockaddr_storage)) return EINVAL;
  out.resize(static_cast<std::size_t>(length));
  if (out.empty()) return 0;
  iovec local{out.data(), out.size()};
  iovec remote{reinterpret_cast<void*>(at), out.size()};
  if (::process_vm_readv(tid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(out.size()))
    return EFAULT;
  return 0;
}

sa_family_t family_of(const std::vector<std::byte>& address) {
  if (address.size() < sizeof(sa_family_t)) return AF_UNSPEC;
  sa_family_t family = AF_UNSPEC;
  std::memcpy(&family, address.data(), sizeof family);
  return family;
}

// sun_path as the kernel takes it: up to the address's end or its first NUL.
std::string unix_path(const std::vector<std::byte>& address) {
  const auto* begin =
      reinterpret_cast<const char*>(address.data()) + offsetof(sockaddr_un, sun_path);
  const auto* end = reinterpret_cast<const char*>(address.data()) + address.size();
  return std::string(begin, std::find(begin, end, '\0'));
}

// Whether the socket `socket` lives in the network namespace of thread `tid` (the jail's).
bool in_network_of(int socket, pid_t tid) {
  const UniqueFd space(::ioctl(socket, SIOCGSKNS));
  struct stat of_socket {};
  struct stat of_thread {};
  const std::string path = "/proc/" + std::to_string(tid) + "/ns/net";
  return space.valid() && ::fstat(space.get(), &of_socket) == 0 &&
         ::stat(path.c_str(), &of_thread) == 0 && of_socket.st_ino == of_thread.st_ino &&
         of_socket.st_dev == of_thread.st_dev;
}

}  // namespace

int descriptors_untakeable() {
  const UniqueFd self(static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0)));
  if (!self.valid()) return errno;
  const UniqueFd copy(static_cast<int>(::syscall(SYS_pidfd_getfd, self.get(), self.get(), 0)));
  return copy.valid() ? 0 : errno;
}

policy::Policy with_connects_brokered(const policy::Policy& policy) {
  const std::array numbers = {static_cast<int>(SYS_connect)};
  return reroute_allowed(policy, numbers,
                         [](std::vector<policy::Rule>& rules, const policy::Rule& allowed) {
                           rules.push_back(to_supervisor(allowed));
                         });
}

ConnectBroker::ConnectBroker(UniqueFd listener, SocketAccess access,
                             std::vector<std::uint64_t> own_mounts, pid_t init)
    : listener_(listener.get()),
      access_(std::move(access)),
      own_mounts_(std::move(own_mounts)),
      workers_(std::make_unique<ConnectWorkers>(
          std::move(listener), access_.connect_as,
          JailMembers{init, access_.connect_as ? std::optional<uid_t>(access_.connect_as->uid)
                                               : std::nullopt})) {}

void ConnectBroker::answer(std::uint64_t id, int error) const {
  answer_notification(listener_, id, error);
}

bool ConnectBroker::still_waiting(std::uint64_t id) const {
  return ::ioctl(listener_, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

bool ConnectBroker::may_reach(int target, const struct stat& info) const {
  // The mount, not the device: a dry run's layer shows its upper directory's device for files,
  // which other binds of that filesystem share.
  if (const auto mount = mount_id_of(target);
      mount && std::find(own_mounts_.begin(), own_mounts_.end(), *mount) != own_mounts_.end()) {
    return true;
  }
  return std::any_of(access_.allowed_sockets.begin(), access_.allowed_sockets.end(),
                     [&](const PinnedSocket& allowed) {
                       return allowed.dev == info.st_dev && allowed.ino == info.st_ino;
                     });
}

std::optional<SocketRefusal> ConnectBroker::take(const seccomp_notif& request) {
  const auto tid = static_cast<pid_t>(request.pid);
  ConnectJob job;
  job.id = request.id;
  job.pid = tid;
  for (std::size_t i = 0; i < job.args.size(); ++i) job.args[i] = request.data.args[i];
  // A refusal names the call it refuses, as the workers' do.
  const auto refused = [&](std::string target, std::string why, int error) {
    return SocketRefusal{std::move(target), std::move(why), error, job.args, job.pid};
  };
  if (const int error = take_descriptor(tid, static_cast<int>(request.data.args[0]), job.socket)) {
    // EBADF: not a descriptor of the tool's; EPERM and the rest: nothing is connected unseen.
    answer(job.id, error == EBADF ? EBADF : EACCES);
    if (error != EPERM && error != ENOSYS) return std::nullopt;  // the caller is gone, say
    // Refused for the supervisor, not the tool: said, or it would look like a network fault.
    return refused("descriptor " + std::to_string(request.data.args[0]),
                   fmt::format("a connect the supervisor cannot make here: it may not take the "
                               "tool's socket (pidfd_getfd: {}; an outer seccomp profile, as "
                               "Docker's without CAP_SYS_PTRACE)",
                               strerrorname_np(error)),
                   EACCES);
  }
  // The descriptor was taken from the thread that still waits, not from a reused pid.
  if (!still_waiting(job.id)) return std::nullopt;
  if (const int error =
          read_address(tid, request.data.args[1], request.data.args[2], job.address)) {
    answer(job.id, error);
    return std::nullopt;
  }
  const sa_family_t family = family_of(job.address);
  if (access_.landlock && access_.net_none && family != AF_UNIX && family != AF_UNSPEC) {
    // No network namespace holds this connect in: --net none is this refusal.
    answer(job.id, EACCES);
    return refused("address family " + std::to_string(family),
                   "the network under --net none in the Landlock mode", EACCES);
  }
  if (family == AF_UNIX && job.address.size() > sizeof(sockaddr_un)) {
    answer(job.id, EINVAL);  // as the kernel answers
    return std::nullopt;
  }
  if (family == AF_NETLINK && job.address.size() >= sizeof(sockaddr_nl)) {
    // Joining multicast groups is checked against the caller's capabilities at connect, and a
    // worker has more over the jail's namespaces than the tool (an unprivileged caller owns
    // them): groups are joined by bind, which the tool makes with its own rights.
    sockaddr_nl netlink{};
    std::memcpy(&netlink, job.address.data(), sizeof netlink);
    if (netlink.nl_groups != 0) {
      answer(job.id, EPERM);
      return refused("netlink groups " + std::to_string(netlink.nl_groups),
                     "netlink multicast groups joined by connect (bind joins them)", EPERM);
    }
  }
  const bool named_unix = family == AF_UNIX && job.address.size() > offsetof(sockaddr_un, sun_path);
  if (named_unix && job.address[offsetof(sockaddr_un, sun_path)] == std::byte{0}) {
    // An abstract name lives in the socket's network namespace.
    const auto* name =
        reinterpret_cast<const char*>(job.address.data()) + offsetof(sockaddr_un, sun_path) + 1;
    const std::string abstract(name, job.address.size() - offsetof(sockaddr_un, sun_path) - 1);
    bool allowed = std::find(access_.allowed_abstract.begin(), access_.allowed_abstract.end(),
                             abstract) != access_.allowed_abstract.end();
    if (!allowed && access_.own_network) {
      allowed = in_network_of(job.socket.get(), tid);
    } else if (!allowed && access_.landlock) {
      allowed = false;  // the host's names, and no namespace tells the jail's from them
    } else if (!allowed) {
      // The host's network: the name is the jail's only where a process of the jail listens,
      // which the worker checks around the connect itself (not here: reading the jail's
      // processes takes a while, which the supervisor's loop must not spend).
      job.abstract_name = abstract;
      allowed = true;
    }
    if (!allowed) {
      answer(job.id, EPERM);  // what Landlock's abstract-socket scope answers
      return refused("@" + printable(abstract),
                     "an abstract socket the jail did not make (--allow-abstract " +
                         printable(abstract) + " reaches it)",
                     EPERM);
    }
  } else if (named_unix) {
    std::string path = unix_path(job.address);
    const std::string named = path;
    if (path.front() != '/') {
      const auto cwd = read_proc_link(tid, "cwd");
      if (!cwd) {
        answer(job.id, ENOENT);
        return std::nullopt;
      }
      path = *cwd + "/" + path;
    }
    const std::string root_link = "/proc/" + std::to_string(tid) + "/root";
    const UniqueFd root(::open(root_link.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root.valid()) {
      answer(job.id, EACCES);
      return std::nullopt;
    }
    job.target.reset(child::sys::openat2(root.get(), path.c_str(), O_PATH | O_CLOEXEC, kInJail));
    if (!job.target.valid()) {
      answer(job.id, errno == EXDEV ? ELOOP : errno);  // RESOLVE_NO_MAGICLINKS says EXDEV
      return std::nullopt;
    }
    struct stat info {};
    if (::fstat(job.target.get(), &info) != 0 || !S_ISSOCK(info.st_mode)) {
      answer(job.id, ECONNREFUSED);  // what connect() says of a file that is not a socket
      return std::nullopt;
    }
    if (!may_reach(job.target.get(), info)) {
      answer(job.id, EACCES);
      // The flag to suggest names the socket file itself: a path through a link the tool made
      // would be the tool's to turn elsewhere (and --allow-socket refuses it).
      const std::string normal = std::filesystem::path(path).lexically_normal().string();
      const UniqueFd direct(child::sys::openat2(root.get(), normal.c_str(), O_PATH | O_CLOEXEC,
                                                kInJail | RESOLVE_NO_SYMLINKS));
      struct stat direct_info {};
      const bool plain = direct.valid() && ::fstat(direct.get(), &direct_info) == 0 &&
                         direct_info.st_dev == info.st_dev && direct_info.st_ino == info.st_ino;
      return refused(
          printable(named),
          plain ? "a socket file outside the jail's own filesystems (--allow-socket " +
                      printable(normal) + " reaches it)"
                : std::string("a socket file outside the jail's own filesystems, reached "
                              "through a symbolic link (--allow-socket takes the socket file's "
                              "own path)"),
          EACCES);
    }
  }
  workers_->submit(std::move(job));
  return std::nullopt;
}

}  // namespace jail
