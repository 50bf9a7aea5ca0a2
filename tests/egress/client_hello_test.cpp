// The ClientHello reader: server names from real and built hellos, hellos split across reads
// and records, truncated or malformed ones, and bytes that are no TLS.
#include "egress/client_hello.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "client_hello_bytes.hpp"

namespace jail::egress {
namespace {

using Status = HelloReading::Status;
using test::client_hello;
using test::client_hello_message;
using test::in_records;

TEST(ClientHello, ReadsTheServerNameOfAHelloFromOpenssl) {
  // Captured from `openssl s_client -servername api.example.com` (OpenSSL 3.0).
  std::ifstream file(EGRESS_TEST_DATA "/client_hello_openssl.bin", std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(file), {}};
  ASSERT_GT(bytes.size(), 100u);
  const HelloReading reading = read_client_hello(bytes);
  ASSERT_EQ(reading.status, Status::complete) << reading.problem;
  EXPECT_EQ(reading.server_name, "api.example.com");
}

TEST(ClientHello, ReadsABuiltHello) {
  const HelloReading reading = read_client_hello(client_hello("Example.COM"));
  ASSERT_EQ(reading.status, Status::complete);
  EXPECT_EQ(reading.server_name, "Example.COM");
}

TEST(ClientHello, AHelloWithoutServerNameIsComplete) {
  const HelloReading reading = read_client_hello(client_hello(std::nullopt));
  EXPECT_EQ(reading.status, Status::complete);
  EXPECT_FALSE(reading.server_name.has_value());
}

TEST(ClientHello, WantsMoreUntilEveryPieceHasArrived) {
  const std::string bytes = client_hello("example.com");
  for (std::size_t cut = 1; cut < bytes.size(); ++cut) {
    EXPECT_EQ(read_client_hello(bytes.substr(0, cut)).status, Status::need_more) << cut;
  }
  EXPECT_EQ(read_client_hello(bytes + "trailing").server_name, "example.com");
}

TEST(ClientHello, ReassemblesAHelloSpreadOverRecords) {
  const std::string bytes = in_records(client_hello_message("a.example.com", 3000), 100);
  EXPECT_EQ(read_client_hello(bytes.substr(0, bytes.size() - 1)).status, Status::need_more);
  const HelloReading reading = read_client_hello(bytes);
  ASSERT_EQ(reading.status, Status::complete) << reading.problem;
  EXPECT_EQ(reading.server_name, "a.example.com");
}

TEST(ClientHello, OtherBytesAreNoTls) {
  EXPECT_EQ(read_client_hello("GET / HTTP/1.1\r\n").status, Status::not_tls);
  EXPECT_EQ(read_client_hello("S").status, Status::not_tls);
  EXPECT_EQ(read_client_hello("SSH-2.0-x").status, Status::not_tls);
  EXPECT_EQ(read_client_hello(std::string("\x16\x02\x00", 3)).status, Status::not_tls);
}

TEST(ClientHello, RefusesMalformedHellos) {
  const std::string message = client_hello_message("example.com");
  // Lengths inside the hello that overrun it.
  std::string overrun = message;
  overrun[4 + 2 + 32] = '\x7f';  // session id length
  EXPECT_EQ(read_client_hello(in_records(overrun)).status, Status::malformed);
  // Another handshake message first.
  std::string server_hello = message;
  server_hello[0] = '\x02';
  EXPECT_EQ(read_client_hello(in_records(server_hello)).status, Status::malformed);
  // A record of length 0, and a record over 16 KiB.
  EXPECT_EQ(read_client_hello(std::string("\x16\x03\x01\x00\x00", 5)).status, Status::malformed);
  EXPECT_EQ(read_client_hello(std::string("\x16\x03\x01\x40\x01", 5)).status, Status::malformed);
  // A hello claiming more than 16 KiB.
  EXPECT_EQ(read_client_hello(in_records(std::string("\x01\x01\x00\x00", 4) + "xx")).status,
            Status::malformed);
  // An application-data record in the middle of a hello.
  const std::string split = in_records(message, 50);
  EXPECT_EQ(read_client_hello(split.substr(0, 55) + "\x17\x03\x03\x00\x01x").status,
            Status::malformed);
}

TEST(ClientHello, RefusesTwoServerNames) {
  const std::string two_extensions =
      client_hello_message("a.example.com", 0, test::server_name_extension("b.example.com"));
  EXPECT_EQ(read_client_hello(in_records(two_extensions)).status, Status::malformed);
}

TEST(ClientHello, GivesUpOnRecordsThatNeverEnd) {
  // One-byte records: the hello would take far more than kMaxHelloBytes of records.
  const std::string bytes = in_records(client_hello_message("x.example.com", 9000), 1);
  EXPECT_EQ(read_client_hello(bytes).status, Status::malformed);
}

}  // namespace
}  // namespace jail::egress
