// The first request a tool sends: CONNECT and absolute-form requests, the head sent upstream,
// and everything refused.
#include "egress/request_head.hpp"

#include <gtest/gtest.h>

namespace jail::egress {
namespace {

HeadReading read(std::string_view bytes) {
  return read_request_head(bytes);
}

TEST(RequestHead, ConnectWithANameAndPort) {
  const std::string bytes = "CONNECT API.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n\x16\x03\x01";
  const HeadReading reading = read(bytes);
  ASSERT_EQ(reading.status, HeadReading::Status::complete) << reading.problem;
  EXPECT_EQ(reading.head.kind, RequestKind::connect);
  EXPECT_EQ(reading.head.method, "CONNECT");
  EXPECT_EQ(reading.head.authority.host, "api.example.com");
  EXPECT_EQ(reading.head.authority.port, 443);
  EXPECT_FALSE(reading.head.authority.address.has_value());
  EXPECT_EQ(reading.head.size, bytes.size() - 3);  // the tunnel's first bytes are not the head's
}

TEST(RequestHead, ConnectToIpLiterals) {
  const HeadReading v4 = read("CONNECT 192.0.2.1:8443 HTTP/1.1\r\n\r\n");
  ASSERT_EQ(v4.status, HeadReading::Status::complete);
  ASSERT_TRUE(v4.head.authority.address.has_value());
  EXPECT_EQ(v4.head.authority.text(), "192.0.2.1:8443");
  const HeadReading v6 = read("CONNECT [2001:DB8::1]:443 HTTP/1.1\r\n\r\n");
  ASSERT_EQ(v6.status, HeadReading::Status::complete);
  EXPECT_EQ(v6.head.authority.host, "2001:db8::1");
  EXPECT_EQ(v6.head.authority.text(), "[2001:db8::1]:443");
}

TEST(RequestHead, AbsoluteFormDefaultsToPort80AndRewritesTheHead) {
  const HeadReading reading = read(
      "GET http://Example.com/a/b?q=1#frag HTTP/1.1\r\n"
      "Host: elsewhere.example\r\n"
      "User-Agent: t\r\n"
      "Proxy-Connection: keep-alive\r\n"
      "Proxy-Authorization: Basic eDp5\r\n"
      "Connection: keep-alive, X-Hop\r\n"
      "Keep-Alive: timeout=5\r\n"
      "X-Hop: 1\r\n"
      "Accept: */*\r\n\r\n");
  ASSERT_EQ(reading.status, HeadReading::Status::complete) << reading.problem;
  EXPECT_EQ(reading.head.kind, RequestKind::plain_http);
  EXPECT_EQ(reading.head.authority.host, "example.com");
  EXPECT_EQ(reading.head.authority.port, 80);
  EXPECT_EQ(reading.head.upstream_head,
            "GET /a/b?q=1 HTTP/1.1\r\n"
            "Host: example.com\r\n"
            "User-Agent: t\r\n"
            "Accept: */*\r\n"
            "Connection: close\r\n\r\n");
}

TEST(RequestHead, ConnectionNeverDropsTheMessagesFraming) {
  // Listed in Connection, the framing headers would be dropped and the body read upstream as a
  // request of its own.
  const HeadReading reading = read(
      "POST http://example.com/ HTTP/1.1\r\n"
      "Connection: Content-Length, Transfer-Encoding, X-Hop\r\n"
      "Transfer-Encoding: chunked\r\n"
      "X-Hop: 1\r\n\r\n");
  ASSERT_EQ(reading.status, HeadReading::Status::complete) << reading.problem;
  EXPECT_EQ(reading.head.upstream_head,
            "POST / HTTP/1.1\r\n"
            "Host: example.com\r\n"
            "Transfer-Encoding: chunked\r\n"
            "Connection: close\r\n\r\n");
}

TEST(RequestHead, AbsoluteFormWithPortQueryOnlyAndHttp10) {
  const HeadReading reading =
      read("POST http://192.0.2.1:8080?x HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi");
  ASSERT_EQ(reading.status, HeadReading::Status::complete) << reading.problem;
  EXPECT_EQ(reading.head.authority.port, 8080);
  EXPECT_EQ(reading.head.upstream_head,
            "POST /?x HTTP/1.0\r\nHost: 192.0.2.1:8080\r\nContent-Length: 2\r\n"
            "Connection: close\r\n\r\n");
  EXPECT_EQ(reading.head.size, std::string_view("POST http://192.0.2.1:8080?x HTTP/1.0\r\n"
                                                "Content-Length: 2\r\n\r\n")
                                   .size());
}

TEST(RequestHead, AbsoluteFormWithIpv6AndNoPath) {
  const HeadReading reading = read("GET http://[2001:db8::1]:8080 HTTP/1.1\r\n\r\n");
  ASSERT_EQ(reading.status, HeadReading::Status::complete) << reading.problem;
  EXPECT_EQ(reading.head.upstream_head,
            "GET / HTTP/1.1\r\nHost: [2001:db8::1]:8080\r\nConnection: close\r\n\r\n");
}

TEST(RequestHead, AnIncompleteHeadWantsMore) {
  EXPECT_EQ(read("").status, HeadReading::Status::need_more);
  EXPECT_EQ(read("CONNECT example.com:443 HTTP/1.1\r\nHost: x").status,
            HeadReading::Status::need_more);
}

TEST(RequestHead, RefusesWhatIsNoProxyRequest) {
  for (const std::string_view bytes : {
           "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
           "GET https://example.com/ HTTP/1.1\r\n\r\n",
           "GET ftp://example.com/ HTTP/1.1\r\n\r\n",
           "GET http://user@example.com/ HTTP/1.1\r\n\r\n",
           "GET http://exa_mple.com/ HTTP/1.1\r\n\r\n",
           "GET http://example.com:0/ HTTP/1.1\r\n\r\n",
           "GET http://example.com:99999/ HTTP/1.1\r\n\r\n",
           "GET http://[::1/ HTTP/1.1\r\n\r\n",
           "GET http:///x HTTP/1.1\r\n\r\n",
           "CONNECT example.com HTTP/1.1\r\n\r\n",
           "CONNECT http://example.com:443 HTTP/1.1\r\n\r\n",
           "CONNECT 2001:db8::1:443 HTTP/1.1\r\n\r\n",
           "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
           "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
           "hello\r\n\r\n",
       }) {
    const HeadReading reading = read(bytes);
    EXPECT_EQ(reading.status, HeadReading::Status::refused) << bytes;
    EXPECT_FALSE(reading.problem.empty());
  }
}

TEST(RequestHead, RefusesAHeadOver16KiB) {
  std::string bytes = "GET http://example.com/ HTTP/1.1\r\nX-Big: ";
  bytes.append(kMaxHeadBytes, 'a');
  const HeadReading reading = read(bytes);
  EXPECT_EQ(reading.status, HeadReading::Status::refused);
  EXPECT_NE(reading.problem.find("longer than 16384 bytes"), std::string::npos) << reading.problem;
  bytes += "\r\n\r\n";
  EXPECT_EQ(read(bytes).status, HeadReading::Status::refused);
}

TEST(RequestTarget, AuthorityFormNeedsAPort) {
  EXPECT_TRUE(parse_authority_form("example.com:1").has_value());
  EXPECT_FALSE(parse_authority_form("example.com").has_value());
  EXPECT_FALSE(parse_authority_form("example.com:").has_value());
  EXPECT_FALSE(parse_authority_form(":443").has_value());
  EXPECT_FALSE(parse_authority_form("[2001:db8::1]").has_value());
  EXPECT_FALSE(parse_authority_form("10.1:443").has_value());
}

TEST(RequestTarget, TheSchemeIsCaseInsensitive) {
  const auto target = parse_absolute_http("HTTP://example.com:81/x");
  ASSERT_TRUE(target.has_value());
  EXPECT_EQ(target->authority.port, 81);
  EXPECT_EQ(target->origin_target, "/x");
}

}  // namespace
}  // namespace jail::egress
