// The network a --net-allow test runs in: this test process moves into a network and a mount
// namespace of its own, where TEST-NET addresses (192.0.2.1, 192.0.2.2), the metadata address
// (169.254.169.254) and a private one (10.11.12.13) sit on the loopback, each with a server
// (egress_server.py), and a private /etc/hosts names them (api.test, other.test, loop.test,
// metadata.test, private.test). jail, started from here, and its egress proxy see this network
// and these names; the host's network is never touched. The destructor stops the servers and
// takes the process back to the namespaces it came from.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "run_jail.hpp"

namespace jail_test {

class EgressWorld {
 public:
  EgressWorld();
  ~EgressWorld();
  EgressWorld(const EgressWorld&) = delete;
  EgressWorld& operator=(const EgressWorld&) = delete;

 private:
  int host_net_ = -1;
  int host_mounts_ = -1;
  pid_t server_ = -1;
  int server_stdin_ = -1;
  int server_stdout_ = -1;
  std::unique_ptr<TempDir> dir_;
};

}  // namespace jail_test
