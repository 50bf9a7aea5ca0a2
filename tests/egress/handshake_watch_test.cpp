// The client's plaintext handshake after its first ClientHello: a second hello (the answer to a
// HelloRetryRequest) is checked like the first; encrypted records end the watch.
#include "egress/handshake_watch.hpp"

#include <gtest/gtest.h>

#include "client_hello_bytes.hpp"
#include "egress/server_hello.hpp"

namespace jail::egress {
namespace {

using Status = HandshakeWatch::Step::Status;
using test::change_cipher_spec;
using test::client_hello;
using test::client_hello_message;
using test::in_records;
using test::record;
using test::server_hello;

TEST(HandshakeWatch, ASecondHelloNamingAnotherHostIsRefused) {
  HandshakeWatch watch("api.test");
  const std::string first = client_hello("api.test");
  const auto step = watch.feed(first + client_hello("evil.test"));
  EXPECT_EQ(step.status, Status::name_mismatch);
  EXPECT_EQ(step.server_name, "evil.test");
  EXPECT_EQ(step.checked, first.size());  // the first hello may go, the second may not
}

TEST(HandshakeWatch, ASecondHelloNamingTheHostPasses) {
  HandshakeWatch watch("api.test");
  const std::string bytes = client_hello("api.test") + client_hello("API.test.");
  const auto step = watch.feed(bytes);
  EXPECT_EQ(step.status, Status::watching);
  EXPECT_EQ(step.checked, bytes.size());
}

TEST(HandshakeWatch, ASecondHelloWithoutANameAfterANamedOneIsRefused) {
  HandshakeWatch watch("api.test");
  const auto step = watch.feed(client_hello("api.test") + client_hello(std::nullopt));
  EXPECT_EQ(step.status, Status::name_mismatch);
  EXPECT_EQ(step.server_name, "");
}

TEST(HandshakeWatch, AHelloSplitAcrossRecordsAndFeedsIsChecked) {
  HandshakeWatch watch("api.test");
  const std::string first = client_hello("api.test");
  const std::string second = in_records(client_hello_message("evil.test"), 7);
  auto step = watch.feed(first + second.substr(0, 30));
  EXPECT_EQ(step.status, Status::watching);
  const std::string rest = (first + second).substr(step.checked);
  step = watch.feed(rest);
  EXPECT_EQ(step.status, Status::name_mismatch);
}

TEST(HandshakeWatch, AfterChangeCipherSpecAHandshakeRecordWaitsForTheServer) {
  HandshakeWatch watch("api.test");
  const std::string before = client_hello("api.test") + change_cipher_spec();
  const std::string bytes = before + client_hello("evil.test");
  auto step = watch.feed(bytes);
  EXPECT_EQ(step.status, Status::needs_server);
  EXPECT_EQ(step.checked, before.size());
  // TLS 1.3's compatibility mode: a dummy ChangeCipherSpec, then the second hello in plaintext.
  watch.server_answered(true);
  step = watch.feed(bytes.substr(step.checked));
  EXPECT_EQ(step.status, Status::name_mismatch);
}

TEST(HandshakeWatch, AfterChangeCipherSpecWithoutRetryTheRestIsEncrypted) {
  HandshakeWatch watch("api.test");
  // TLS 1.2 resumption: the Finished after ChangeCipherSpec is encrypted, any bytes at all.
  const std::string encrypted = record(22, std::string("\x01\xff\xff\xff", 4) + "garbage");
  const std::string bytes = client_hello("api.test") + change_cipher_spec() + encrypted;
  auto step = watch.feed(bytes);
  ASSERT_EQ(step.status, Status::needs_server);
  watch.server_answered(false);
  step = watch.feed(std::string_view(bytes).substr(step.checked));
  EXPECT_EQ(step.status, Status::done);
}

TEST(HandshakeWatch, ApplicationDataEndsTheWatch) {
  HandshakeWatch watch("api.test");
  const std::string bytes = client_hello("api.test") + record(23, "x") + client_hello("evil");
  const auto step = watch.feed(bytes);
  EXPECT_EQ(step.status, Status::done);
  EXPECT_EQ(step.checked, bytes.size());
}

TEST(HandshakeWatch, OtherHandshakeMessagesAreSkipped) {
  HandshakeWatch watch("api.test");
  // A TLS 1.2 client's Certificate and ClientKeyExchange, one spanning two records.
  const std::string messages = "\x0b" + test::with_length(std::string(3000, 'c'), 3) + "\x10" +
                               test::with_length(std::string(65, 'k'), 3);
  const std::string bytes = client_hello("api.test") + in_records(messages, 2000);
  const auto step = watch.feed(bytes);
  EXPECT_EQ(step.status, Status::watching);
  EXPECT_EQ(step.checked, bytes.size());
}

TEST(HandshakeWatch, TooManyHellosOrTooMuchPlaintextIsRefused) {
  HandshakeWatch hellos("api.test");
  std::string bytes;
  for (int i = 0; i < 5; ++i) bytes += client_hello("api.test");
  EXPECT_EQ(hellos.feed(bytes).status, Status::malformed);

  HandshakeWatch plaintext("api.test");
  const std::string certificate = "\x0b" + test::with_length(std::string(70'000, 'c'), 3);
  EXPECT_EQ(plaintext.feed(client_hello("api.test") + in_records(certificate)).status,
            Status::malformed);
}

TEST(HandshakeWatch, AFirstHelloWithoutANameAllowsOnlyTheHostAfter) {
  HandshakeWatch same("api.test");
  EXPECT_EQ(same.feed(client_hello(std::nullopt) + client_hello("api.test")).status,
            Status::watching);
  HandshakeWatch other("api.test");
  EXPECT_EQ(other.feed(client_hello(std::nullopt) + client_hello("evil.test")).status,
            Status::name_mismatch);
}

TEST(ServerAnswer, TellsAHelloRetryRequestFromAServerHello) {
  EXPECT_EQ(read_server_answer(server_hello(true)), ServerAnswer::retry_request);
  EXPECT_EQ(read_server_answer(server_hello(false)), ServerAnswer::other);
  EXPECT_EQ(read_server_answer(server_hello(true).substr(0, 20)), ServerAnswer::need_more);
  EXPECT_EQ(read_server_answer(record(21, "\x02\x28")), ServerAnswer::other);
  EXPECT_EQ(read_server_answer("SSH-2.0-OpenSSH_9.6\r\n"), ServerAnswer::other);
  // A ServerHello cut into records of a few bytes each.
  const std::string message = server_hello(true).substr(5);
  EXPECT_EQ(read_server_answer(in_records(message, 5)), ServerAnswer::retry_request);
}

}  // namespace
}  // namespace jail::egress
