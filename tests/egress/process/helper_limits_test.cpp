// jail-egress's bound on connections at once: the one past it is answered 503 and reported.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <vector>

#include "egress_helper.hpp"

namespace jail::egress::test {
namespace {

int connect_to(std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

TEST(EgressHelper, RefusesTheConnectionPast256With503) {
  std::vector<std::string> arguments = {"--allow", "example.com"};
  if (geteuid() == 0) arguments.insert(arguments.begin(), {"--uid", "65534", "--gid", "65534"});
  EgressHelper helper(arguments);
  ASSERT_EQ(helper.next_line()["event"], "ready") << helper.error_output();
  std::vector<int> idle;  // each holds a connection waiting for its request head
  for (int i = 0; i < 256; ++i) {
    const int fd = connect_to(helper.proxy_port());
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  const std::string answer = exchange(helper.proxy_port(), "");
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 503 Service Unavailable\r\n")) << answer;
  const auto refusal = helper.next_line();
  EXPECT_EQ(refusal["id"], 257);
  EXPECT_EQ(refusal["allowed"], false);
  EXPECT_EQ(refusal["reason"], "too_many_connections");
  for (const int fd : idle) close(fd);
}

}  // namespace
}  // namespace jail::egress::test
