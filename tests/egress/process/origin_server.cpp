// Test support: the origin server's accept loop, one request per connection.
#include "origin_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

#include "test_network.hpp"

namespace jail::egress::test {

OriginServer::OriginServer(std::string body) : body_(std::move(body)) {
  listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  inet_pton(AF_INET, kOriginAddress, &address.sin_addr);
  socklen_t size = sizeof address;
  if (listener_ < 0 || bind(listener_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
      listen(listener_, 16) != 0 ||
      getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    throw std::runtime_error("cannot listen on 192.0.2.1");
  }
  port_ = ntohs(address.sin_port);
  thread_ = std::thread([this] { serve(); });
}

OriginServer::~OriginServer() {
  stopping_ = true;
  thread_.join();
  close(listener_);
}

std::vector<std::string> OriginServer::heads() {
  const std::lock_guard lock(mutex_);
  return heads_;
}

std::string OriginServer::response() const {
  return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body_.size()) +
         "\r\nConnection: close\r\n\r\n" + body_;
}

void OriginServer::serve() {
  while (!stopping_) {
    pollfd watched{listener_, POLLIN, 0};
    if (poll(&watched, 1, 100) <= 0) continue;
    const int client = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    std::string head;
    char buffer[4096];
    while (head.find("\r\n\r\n") == std::string::npos) {
      pollfd readable{client, POLLIN, 0};
      if (poll(&readable, 1, 5000) <= 0) break;
      const ssize_t got = recv(client, buffer, sizeof buffer, 0);
      if (got <= 0) break;
      head.append(buffer, static_cast<std::size_t>(got));
    }
    {
      const std::lock_guard lock(mutex_);
      heads_.push_back(head);
    }
    const std::string answer = response();
    (void)send(client, answer.data(), answer.size(), MSG_NOSIGNAL);
    close(client);
  }
}

}  // namespace jail::egress::test
