// Test support: a server on 192.0.2.1 for one connection that answers the client's first TLS
// record with fixed bytes (or not at all), keeps all it is sent, and never closes first: a TLS
// server asking for a second ClientHello, or a silent sink.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace jail::egress::test {

class ScriptedServer {
 public:
  explicit ScriptedServer(std::string answer);
  ~ScriptedServer();  // stops and joins its thread, then closes

  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] std::string received();
  // Waits (10 s at most) until `size` bytes have arrived; the count then.
  std::size_t wait_received(std::size_t size);

 private:
  void serve();

  std::string answer_;
  int listener_ = -1;
  int client_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::string received_;
  std::thread thread_;
};

}  // namespace jail::egress::test
