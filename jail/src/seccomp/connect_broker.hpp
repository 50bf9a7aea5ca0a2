// Parent side: every connect the policy allows is performed by the supervisor, never by the
// tool. A read-only bind does not stop connect() on a socket file, and a host socket under a bound
// directory (a tmux server's, a docker daemon's) would run commands on the host for the tool.
// Landlock cannot tell a socket file from others (ABI 7), and a check that then let the tool's
// own call continue would be a race: the kernel reads the address and the descriptor table again,
// after another thread of the tool changed them. So the broker takes the tool's socket
// (pidfd_getfd), reads the address once, resolves a socket file itself inside the jail's root,
// and connects that very file (through /proc/self/fd) only when it is the jail's own (on one of
// the jail's own filesystems: /tmp, /dev/shm, a --tmpfs, a dry run's layer) or `--allow-socket`
// names it. An abstract name is the jail's own in its own network namespace; with --net host,
// where a process of the jail listens on it (abstract_owner.hpp), or `--allow-abstract` names it.
// Other families connect as asked. Datagram Unix sockets, which could send to a socket file without
// connecting, are never made (the baseline).
#pragma once

#include <linux/seccomp.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policy/policy.hpp"
#include "seccomp/allowed_sockets.hpp"
#include "seccomp/connect_workers.hpp"

namespace jail {

// What the tool may connect to beyond the jail's own sockets (Spec::allow_sockets and
// Spec::allow_abstract), and as whom.
struct SocketAccess {
  std::vector<PinnedSocket> allowed_sockets;  // found before the tool started
  std::vector<std::string> allowed_abstract;
  bool own_network = true;  // the jail has a network namespace of its own (--net none)
  // The Landlock mode: the workers' connects are not confined by the tool's Landlock domain,
  // so the broker itself refuses what the domain would (inet sockets under --net none,
  // abstract names not allowed by name).
  bool landlock = false;
  bool net_none = false;
  // A root caller's tool runs as host ids of its own: the connects are made as those.
  std::optional<HostIds> connect_as;
};

// 0 when this process may take another's descriptors (pidfd_getfd), which the broker needs for
// every connect it makes; else the errno: an outer seccomp profile refuses it (Docker's, to a
// container without CAP_SYS_PTRACE), and then the broker connects nothing.
[[nodiscard]] int descriptors_untakeable();

// `policy` with every rule that allows connect made `log` (and the default, when it allows):
// the supervisor gets each connect, evaluates the policy and hands the allowed ones to the
// broker.
[[nodiscard]] policy::Policy with_connects_brokered(const policy::Policy& policy);

class ConnectBroker {
 public:
  // `listener` is the broker's own descriptor of the tool's listener; `own_mounts` the mount ids
  // of the jail's writable tmpfs mounts and layers (as the child reported them); `init` the
  // jail's init (a host pid), below which the jail's processes are.
  ConnectBroker(UniqueFd listener, SocketAccess access, std::vector<std::uint64_t> own_mounts,
                pid_t init);

  // Takes a waiting connect the policy allows: answers it at once where it fails or is refused,
  // or hands it to a worker, which answers once connected. A refusal is returned for the report.
  [[nodiscard]] std::optional<SocketRefusal> take(const seccomp_notif& request);
  // What the workers refused since the last call.
  [[nodiscard]] std::vector<SocketRefusal> take_refusals() { return workers_->take_refusals(); }

 private:
  int listener_;  // owned by workers_
  SocketAccess access_;
  std::vector<std::uint64_t> own_mounts_;
  std::unique_ptr<ConnectWorkers> workers_;

  void answer(std::uint64_t id, int error) const;
  [[nodiscard]] bool still_waiting(std::uint64_t id) const;
  // Whether the socket file `target` (its inode `info`) may be reached: on one of the jail's own
  // mounts, or the very file an --allow-socket named when the jail began.
  [[nodiscard]] bool may_reach(int target, const struct stat& info) const;
};

}  // namespace jail
