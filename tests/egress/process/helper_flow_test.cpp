// jail-egress end to end, in a network namespace of the test's own: an origin server on
// 192.0.2.1, names from a private /etc/hosts, and the tool played by the test's sockets.
#include <unistd.h>

#include <gtest/gtest.h>

#include <memory>

#include "../client_hello_bytes.hpp"
#include "egress_helper.hpp"
#include "origin_server.hpp"
#include "test_network.hpp"

namespace jail::egress::test {
namespace {

using jail::egress::test::client_hello;

constexpr const char* kHosts =
    "127.0.0.1 localhost\n192.0.2.1 origin.test\n127.0.0.1 sneaky.test\n";

class EgressFlow : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!enter_test_network(kHosts, why)) GTEST_SKIP() << why;
    origin_ = std::make_unique<OriginServer>(std::string(100'000, 'x'));
  }

  std::unique_ptr<EgressHelper> start(const std::vector<std::string>& allowed) {
    std::vector<std::string> arguments = {"--uid", "65534", "--gid", "65534"};
    for (const auto& entry : allowed) {
      arguments.push_back("--allow");
      arguments.push_back(entry);
    }
    auto helper = std::make_unique<EgressHelper>(arguments);
    EXPECT_EQ(helper->next_line()["event"], "ready") << helper->error_output();
    return helper;
  }

  std::string origin() const { return std::string(kOriginAddress) + ":" + port(); }
  std::string port() const { return std::to_string(origin_->port()); }

  std::unique_ptr<OriginServer> origin_;
};

TEST_F(EgressFlow, FetchesAnAllowedAddressInAbsoluteForm) {
  auto helper = start({origin()});
  const std::string request = "GET http://" + origin() +
                              "/file?x=1 HTTP/1.1\r\nProxy-Authorization: Basic eDp5\r\n"
                              "Proxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n";
  EXPECT_EQ(exchange(helper->proxy_port(), request), origin_->response());

  const auto heads = origin_->heads();
  ASSERT_EQ(heads.size(), 1u);
  const std::string expected_head = "GET /file?x=1 HTTP/1.1\r\nHost: " + origin() +
                                    "\r\nAccept: */*\r\nConnection: close\r\n\r\n";
  EXPECT_EQ(heads[0], expected_head);
  const auto decision = helper->next_line();
  EXPECT_EQ(decision["event"], "connection");
  EXPECT_EQ(decision["id"], 1);
  EXPECT_EQ(decision["name"], kOriginAddress);
  EXPECT_EQ(decision["port"], origin_->port());
  EXPECT_EQ(decision["method"], "GET");
  EXPECT_EQ(decision["allowed"], true);
  EXPECT_EQ(decision["address"], kOriginAddress);
  const auto closed = helper->next_line();
  EXPECT_EQ(closed["event"], "closed");
  EXPECT_EQ(closed["id"], 1);
  EXPECT_EQ(closed["bytes_out"], expected_head.size());
  EXPECT_EQ(closed["bytes_in"], origin_->response().size());
}

TEST_F(EgressFlow, TunnelsToAnAllowedNameWithConnect) {
  auto helper = start({"origin.test:" + port()});
  const std::string inner = "GET / HTTP/1.1\r\nHost: origin.test\r\n\r\n";
  const std::string answer =
      exchange(helper->proxy_port(), "CONNECT origin.test:" + port() + " HTTP/1.1\r\n\r\n" + inner);
  EXPECT_EQ(answer, "HTTP/1.1 200 Connection established\r\n\r\n" + origin_->response());
  const auto decision = helper->next_line();
  EXPECT_EQ(decision["allowed"], true);
  EXPECT_EQ(decision["name"], "origin.test");
  EXPECT_EQ(decision["method"], "CONNECT");
  EXPECT_EQ(decision["address"], kOriginAddress);
  const auto closed = helper->next_line();
  EXPECT_EQ(closed["bytes_out"], inner.size());
  EXPECT_EQ(closed["bytes_in"], origin_->response().size());
}

TEST_F(EgressFlow, RefusesAPortTheEntryDoesNotName) {
  auto helper = start({origin()});
  const std::string other = std::string(kOriginAddress) + ":" + std::to_string(origin_->port() + 1);
  const std::string answer =
      exchange(helper->proxy_port(), "CONNECT " + other + " HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 403 Forbidden\r\n")) << answer;
  EXPECT_NE(answer.find("jail: " + other + " is not in the allow-list (--net-allow)"),
            std::string::npos);
  const auto decision = helper->next_line();
  EXPECT_EQ(decision["allowed"], false);
  EXPECT_EQ(decision["reason"], "not_in_allow_list");
  EXPECT_TRUE(origin_->heads().empty());
}

TEST_F(EgressFlow, ARefusedUploadStillGetsItsAnswer) {
  auto helper = start({origin()});
  const std::string other = std::string(kOriginAddress) + ":" + std::to_string(origin_->port() + 1);
  const std::string body(200'000, 'u');
  const std::string answer =
      exchange(helper->proxy_port(), "POST http://" + other + "/ HTTP/1.1\r\nContent-Length: " +
                                         std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 403 Forbidden\r\n")) << answer;
}

TEST_F(EgressFlow, RefusesLoopbackBehindAnAllowedName) {
  auto helper = start({"sneaky.test:" + port()});
  const std::string answer =
      exchange(helper->proxy_port(), "GET http://sneaky.test:" + port() + "/ HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 403 Forbidden\r\n")) << answer;
  EXPECT_NE(answer.find("127.0.0.1: loopback 127.0.0.0/8"), std::string::npos) << answer;
  const auto decision = helper->next_line();
  EXPECT_EQ(decision["reason"], "address_refused");
  EXPECT_EQ(decision["name"], "sneaky.test");
}

TEST_F(EgressFlow, AnAllowedRangeAsWideAsEverythingOpensNoLoopback) {
  auto helper = start({"0.0.0.0/0:" + port()});
  const std::string answer =
      exchange(helper->proxy_port(), "CONNECT 127.0.0.1:" + port() + " HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 403 Forbidden\r\n")) << answer;
  const auto decision = helper->next_line();
  EXPECT_EQ(decision["reason"], "address_refused");
  EXPECT_EQ(decision["name"], "127.0.0.1");
  // The same entry lets the test network's own address through.
  EXPECT_EQ(exchange(helper->proxy_port(), "GET http://" + origin() + "/ HTTP/1.1\r\n\r\n"),
            origin_->response());
}

TEST_F(EgressFlow, RefusesWhatIsNoProxyRequest) {
  auto helper = start({origin()});
  const std::string answer = exchange(helper->proxy_port(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 400 Bad Request\r\n")) << answer;
  EXPECT_EQ(helper->next_line()["reason"], "bad_request");
}

TEST_F(EgressFlow, EndsATunnelWhoseServerNameIsAnotherHost) {
  auto helper = start({"origin.test:" + port()});
  const std::string answer =
      exchange(helper->proxy_port(), "CONNECT origin.test:" + port() + " HTTP/1.1\r\n\r\n" +
                                         client_hello("elsewhere.example"));
  EXPECT_EQ(answer, "HTTP/1.1 200 Connection established\r\n\r\n");
  EXPECT_EQ(helper->next_line()["allowed"], true);
  const auto mismatch = helper->next_line();
  EXPECT_EQ(mismatch["event"], "connection");
  EXPECT_EQ(mismatch["id"], 1);
  EXPECT_EQ(mismatch["allowed"], false);
  EXPECT_EQ(mismatch["reason"], "tls_sni_mismatch");
  EXPECT_EQ(mismatch["sni"], "elsewhere.example");
  EXPECT_EQ(helper->next_line()["bytes_out"], 0);
  EXPECT_TRUE(origin_->heads().empty() || origin_->heads()[0].empty());
}

TEST_F(EgressFlow, PassesATunnelWhoseServerNameIsTheConnectHost) {
  auto helper = start({"origin.test:" + port()});
  const std::string hello = client_hello("Origin.Test.");
  (void)exchange(helper->proxy_port(),
                 "CONNECT origin.test:" + port() + " HTTP/1.1\r\n\r\n" + hello + "\r\n\r\n");
  EXPECT_EQ(helper->next_line()["allowed"], true);
  const auto closed = helper->next_line();
  EXPECT_EQ(closed["event"], "closed");
  EXPECT_EQ(closed["bytes_out"], hello.size() + 4);
  ASSERT_EQ(origin_->heads().size(), 1u);
  EXPECT_EQ(origin_->heads()[0], hello + "\r\n\r\n");
}

TEST_F(EgressFlow, CurlFetchesThroughTheProxyBothWays) {
  if (access("/usr/bin/curl", X_OK) != 0) GTEST_SKIP() << "curl is not installed";
  auto helper = start({"origin.test:" + port()});
  const std::string proxy = "http://127.0.0.1:" + std::to_string(helper->proxy_port());
  for (const char* tunnel : {"--no-proxytunnel", "--proxytunnel"}) {
    const std::string command = "curl -sS --max-time 10 " + std::string(tunnel) + " -x " + proxy +
                                " http://origin.test:" + port() + "/ | wc -c";
    FILE* pipe = popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    char count[64] = {};
    ASSERT_NE(fgets(count, sizeof count, pipe), nullptr);
    pclose(pipe);
    EXPECT_EQ(std::stoul(count), 100'000u) << tunnel;
  }
}

}  // namespace
}  // namespace jail::egress::test
