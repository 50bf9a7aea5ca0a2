// Parent side: the threads that perform the tool's connects for the broker (connect_broker.hpp).
// A connect may block for as long as the peer takes (a TCP handshake, a full listen backlog), and
// the supervisor's loop must not: each connect runs on a worker, which answers the tool's waiting
// notification itself. Workers take the tool's host ids first, so that the peer's SO_PEERCRED
// and the socket file's permission check see the tool, not jail.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "seccomp/abstract_owner.hpp"
#include "unique_fd.hpp"

namespace jail {

struct HostIds {
  uid_t uid = 0;
  gid_t gid = 0;
};

// A connect the broker refused: the tool got `error`.
struct SocketRefusal {
  std::string target;  // the socket as the tool named it (an abstract name starts with '@')
  std::string why;     // what it is, and the flag that would allow it
  int error = 0;
  std::array<std::uint64_t, 6> args{};  // the refused call's
  pid_t pid = 0;                        // the caller's, as the host sees it
};

// Answers the waiting notification `id` on `listener`: the call returns 0, or fails with `error`.
// ENOENT (the caller is gone, killed or its jail ended) is nothing to report.
void answer_notification(int listener, std::uint64_t id, int error);

struct ConnectJob {
  std::uint64_t id = 0;  // the waiting notification, answered with the connect's result
  std::array<std::uint64_t, 6> args{};
  pid_t pid = 0;
  UniqueFd socket;  // the tool's socket: the same open file, taken with pidfd_getfd
  // The address to connect to, as the tool gave it; or, when `target` is open, the socket file
  // the broker resolved and checked, reached through /proc/self/fd so nothing is resolved twice.
  std::vector<std::byte> address;
  UniqueFd target;
  // With the host's network: the abstract name the address holds, which must be the jail's
  // (abstract_owner.hpp) right before the connect, and whose listener must be a process of the
  // jail right after it (SO_PEERCRED), or the connection is shut and refused.
  std::optional<std::string> abstract_name;
};

class ConnectWorkers {
 public:
  // `listener` is the workers' own descriptor of the seccomp listener. With `connect_as`, each
  // worker thread takes those ids (its own credentials only) before its first connect. `jail`:
  // who the jail's processes are, which may hold abstract names.
  ConnectWorkers(UniqueFd listener, std::optional<HostIds> connect_as, JailMembers jail);
  // Stops: a connect still in flight is shut down (which ends a TCP handshake), and the workers
  // are given a moment to end. One still waiting for a peer that never accepts ends with it, on
  // its own; it owns everything it touches.
  ~ConnectWorkers();
  ConnectWorkers(const ConnectWorkers&) = delete;
  ConnectWorkers& operator=(const ConnectWorkers&) = delete;

  // Queues a job; past kMaxQueued waiting ones it is answered EAGAIN at once, so a tool cannot
  // fill the supervisor's descriptor table with its pending connects.
  void submit(ConnectJob job);

  // What the workers refused since the last call, for the report.
  [[nodiscard]] std::vector<SocketRefusal> take_refusals();

  // At most this many connects run at once; more wait their turn (their callers with them).
  static constexpr std::size_t kMaxWorkers = 16;
  static constexpr std::size_t kMaxQueued = 256;

  struct Shared;  // what the workers and this share; a worker may outlive this

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace jail
