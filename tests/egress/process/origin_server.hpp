// Test support: a small HTTP server on 192.0.2.1 that answers each request with a fixed body
// and keeps the heads it was sent.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace jail::egress::test {

class OriginServer {
 public:
  explicit OriginServer(std::string body);
  ~OriginServer();  // stops and joins its thread

  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] std::vector<std::string> heads();
  // The whole response it sends to each request.
  [[nodiscard]] std::string response() const;

 private:
  void serve();

  std::string body_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::vector<std::string> heads_;
  std::thread thread_;
};

}  // namespace jail::egress::test
