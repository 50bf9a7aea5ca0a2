// A host-side Unix socket server for the tests that attack the jail's sockets: it counts what
// reached it, so a test fails if the tool got through.
#pragma once

#include <sys/types.h>

#include <string>

namespace jail_test {

// A host-side server socket of `type` at `path` (a socket file, or "\0name" for an abstract
// one), non-blocking, connectable by anyone (a socket file: mode 0777, owned as its directory):
// only the jail can keep the tool out.
class HostServer {
 public:
  HostServer(const std::string& path, int type);
  ~HostServer();
  HostServer(const HostServer&) = delete;
  HostServer& operator=(const HostServer&) = delete;

  [[nodiscard]] bool bound() const { return bound_; }
  // Connections (or datagrams) that reached it since the last call; with `peer_uid`, the
  // SO_PEERCRED uid of the last connection.
  int reached(uid_t* peer_uid = nullptr);

 private:
  int fd_ = -1;
  int type_;
  bool bound_ = false;
};

}  // namespace jail_test
