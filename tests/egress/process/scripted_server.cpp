// Test support: the scripted server's one connection, read until the test ends.
#include "scripted_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>

#include "test_network.hpp"

namespace jail::egress::test {

ScriptedServer::ScriptedServer(std::string answer) : answer_(std::move(answer)) {
  listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  inet_pton(AF_INET, kOriginAddress, &address.sin_addr);
  socklen_t size = sizeof address;
  if (listener_ < 0 || bind(listener_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
      listen(listener_, 4) != 0 ||
      getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    throw std::runtime_error("cannot listen on 192.0.2.1");
  }
  port_ = ntohs(address.sin_port);
  thread_ = std::thread([this] { serve(); });
}

ScriptedServer::~ScriptedServer() {
  stopping_ = true;
  thread_.join();
  if (client_ >= 0) close(client_);
  close(listener_);
}

std::string ScriptedServer::received() {
  const std::lock_guard lock(mutex_);
  return received_;
}

std::size_t ScriptedServer::wait_received(std::size_t size) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (true) {
    const std::size_t now = received().size();
    if (now >= size || std::chrono::steady_clock::now() > deadline) return now;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void ScriptedServer::serve() {
  while (!stopping_ && client_ < 0) {
    pollfd watched{listener_, POLLIN, 0};
    if (poll(&watched, 1, 100) > 0) client_ = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
  }
  bool answered = answer_.empty();
  while (!stopping_) {
    pollfd readable{client_, POLLIN, 0};
    if (poll(&readable, 1, 100) <= 0) continue;
    char buffer[65536];
    const ssize_t got = recv(client_, buffer, sizeof buffer, 0);
    if (got <= 0) break;  // the peer's end; ours stays open until the test ends
    std::size_t size;
    {
      const std::lock_guard lock(mutex_);
      received_.append(buffer, static_cast<std::size_t>(got));
      size = received_.size();
    }
    // One answer, once the first record is whole.
    const std::string first = received();
    if (!answered && size >= 5 &&
        size >= 5 + (std::size_t{std::uint8_t(first[3])} << 8 | std::uint8_t(first[4]))) {
      (void)send(client_, answer_.data(), answer_.size(), MSG_NOSIGNAL);
      answered = true;
    }
  }
}

}  // namespace jail::egress::test
