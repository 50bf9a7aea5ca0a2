// jail-egress's CONNECT tunnels past their first bytes: a second ClientHello (after the server's
// HelloRetryRequest) is checked like the first, and what a tunnel still open has moved is
// reported when jail ends the run.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "../client_hello_bytes.hpp"
#include "egress_helper.hpp"
#include "scripted_server.hpp"
#include "test_network.hpp"

namespace jail::egress::test {
namespace {

constexpr const char* kHosts = "127.0.0.1 localhost\n192.0.2.1 api.test\n";
constexpr std::string_view kEstablished = "HTTP/1.1 200 Connection established\r\n\r\n";

// The tool's side of one proxy connection.
class Tool {
 public:
  explicit Tool(std::uint16_t proxy_port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(proxy_port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      throw std::runtime_error("cannot connect to the proxy");
    }
  }
  ~Tool() { close(fd_); }

  void send_all(const std::string& bytes) {
    for (std::size_t at = 0; at < bytes.size();) {
      const ssize_t sent = send(fd_, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
      if (sent <= 0) return;
      at += static_cast<std::size_t>(sent);
    }
  }
  // `size` bytes, or fewer when the proxy closes or 10 s pass.
  std::string receive(std::size_t size) {
    std::string bytes;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (bytes.size() < size && std::chrono::steady_clock::now() < deadline) {
      pollfd watched{fd_, POLLIN, 0};
      if (poll(&watched, 1, 100) <= 0) continue;
      char buffer[4096];
      const ssize_t got = recv(fd_, buffer, std::min(sizeof buffer, size - bytes.size()), 0);
      if (got <= 0) break;
      bytes.append(buffer, static_cast<std::size_t>(got));
    }
    return bytes;
  }
  // Whether the proxy ends the connection within 10 s.
  bool ended() {
    pollfd watched{fd_, POLLIN, 0};
    if (poll(&watched, 1, 10'000) <= 0) return false;
    char byte;
    return recv(fd_, &byte, 1, 0) <= 0;
  }
  void close_sending() { shutdown(fd_, SHUT_WR); }

 private:
  int fd_ = -1;
};

class EgressTunnel : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!enter_test_network(kHosts, why)) GTEST_SKIP() << why;
  }

  void start(const std::string& answer) {
    server_ = std::make_unique<ScriptedServer>(answer);
    helper_ = std::make_unique<EgressHelper>(std::vector<std::string>{
        "--uid", "65534", "--gid", "65534", "--allow", "api.test:" + port()});
    ASSERT_EQ(helper_->next_line()["event"], "ready") << helper_->error_output();
  }

  std::string port() const { return std::to_string(server_->port()); }

  // A tunnel whose first ClientHello names api.test and whose server asks for another.
  std::unique_ptr<Tool> retried_tunnel(const std::string& first_hello) {
    auto tool = std::make_unique<Tool>(helper_->proxy_port());
    tool->send_all("CONNECT api.test:" + port() + " HTTP/1.1\r\n\r\n" + first_hello);
    EXPECT_EQ(tool->receive(kEstablished.size()), kEstablished);
    EXPECT_EQ(tool->receive(server_hello(true).size()), server_hello(true));
    return tool;
  }

  std::unique_ptr<ScriptedServer> server_;
  std::unique_ptr<EgressHelper> helper_;
};

TEST_F(EgressTunnel, ASecondHelloNamingAnotherHostEndsTheTunnel) {
  start(server_hello(true));
  const std::string first = client_hello("api.test");
  auto tool = retried_tunnel(first);
  // TLS 1.3's compatibility mode puts a ChangeCipherSpec before the second hello.
  tool->send_all(change_cipher_spec() + client_hello("evil.test"));
  EXPECT_TRUE(tool->ended());
  EXPECT_EQ(helper_->next_line()["allowed"], true);
  const auto mismatch = helper_->next_line();
  EXPECT_EQ(mismatch["event"], "connection");
  EXPECT_EQ(mismatch["id"], 1);
  EXPECT_EQ(mismatch["allowed"], false);
  EXPECT_EQ(mismatch["reason"], "tls_sni_mismatch");
  EXPECT_EQ(mismatch["sni"], "evil.test");
  const auto closed = helper_->next_line();
  EXPECT_EQ(closed["event"], "closed");
  EXPECT_EQ(closed["bytes_out"], first.size() + change_cipher_spec().size());
  // The server never saw the second hello.
  EXPECT_EQ(server_->received(), first + change_cipher_spec());
}

TEST_F(EgressTunnel, ASecondHelloWithoutChangeCipherSpecIsCheckedToo) {
  start(server_hello(true));
  auto tool = retried_tunnel(client_hello("api.test"));
  tool->send_all(client_hello(std::nullopt));
  EXPECT_TRUE(tool->ended());
  (void)helper_->next_line();
  const auto mismatch = helper_->next_line();
  EXPECT_EQ(mismatch["reason"], "tls_sni_mismatch");
  EXPECT_EQ(mismatch["sni"], "");
}

TEST_F(EgressTunnel, ASecondHelloNamingTheHostPasses) {
  start(server_hello(true));
  const std::string first = client_hello("api.test");
  auto tool = retried_tunnel(first);
  const std::string rest =
      change_cipher_spec() + client_hello("api.test") + record(23, std::string(16'000, 'a'));
  tool->send_all(rest);
  EXPECT_EQ(server_->wait_received(first.size() + rest.size()), first.size() + rest.size());
  tool->close_sending();
  EXPECT_EQ(helper_->next_line()["allowed"], true);
  helper_->end_report();
  const auto closed = helper_->next_line();
  EXPECT_EQ(closed["event"], "closed");
  EXPECT_EQ(closed["bytes_out"], first.size() + rest.size());
  EXPECT_EQ(closed["bytes_in"], server_hello(true).size());
  EXPECT_EQ(server_->received(), first + rest);
}

TEST_F(EgressTunnel, WhatAnOpenTunnelMovedIsReportedWhenTheRunEnds) {
  start("");  // a sink: reads all, never answers, never closes
  Tool tool(helper_->proxy_port());
  const std::string upload(1'200'000, 's');
  tool.send_all("CONNECT api.test:" + port() + " HTTP/1.1\r\n\r\n");
  EXPECT_EQ(tool.receive(kEstablished.size()), kEstablished);
  tool.send_all(upload);
  tool.close_sending();
  EXPECT_EQ(server_->wait_received(upload.size()), upload.size());
  EXPECT_EQ(helper_->next_line()["allowed"], true);
  EXPECT_TRUE(helper_->next_line(std::chrono::milliseconds(300)).is_null());  // still open
  helper_->end_report();
  const auto closed = helper_->next_line();
  EXPECT_EQ(closed["event"], "closed");
  EXPECT_EQ(closed["id"], 1);
  EXPECT_EQ(closed["bytes_out"], upload.size());
  EXPECT_EQ(closed["bytes_in"], 0);
  EXPECT_EQ(closed["open"], true);
  EXPECT_NE(helper_->wait_exit(std::chrono::seconds(5)), -1);
}

}  // namespace
}  // namespace jail::egress::test
