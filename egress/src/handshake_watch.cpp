// Host side: the client's plaintext handshake records (RFC 8446 5.1, RFC 5246 6.2.1).
#include "egress/handshake_watch.hpp"

#include <algorithm>
#include <cstdint>

#include "egress/client_hello.hpp"
#include "egress/host_name.hpp"

namespace jail::egress {

namespace {

constexpr std::uint8_t kChangeCipherSpec = 20;
constexpr std::uint8_t kAlert = 21;
constexpr std::uint8_t kHandshake = 22;
constexpr std::uint8_t kClientHello = 1;
constexpr std::size_t kMaxRecord = 16 * 1024 + 2048;  // TLS 1.2's ciphertext bound

HandshakeWatch::Step malformed(std::size_t checked, std::string problem) {
  HandshakeWatch::Step step;
  step.status = HandshakeWatch::Step::Status::malformed;
  step.checked = checked;
  step.problem = std::move(problem);
  return step;
}

}  // namespace

HandshakeWatch::HandshakeWatch(std::string connect_host)
    : host_(normalize_host_name(connect_host)) {}

void HandshakeWatch::server_answered(bool retry_request) {
  retry_request_ = retry_request;
}

HandshakeWatch::Step HandshakeWatch::feed(std::string_view bytes) {
  using Status = Step::Status;
  std::size_t at = 0;
  while (at < bytes.size()) {
    const auto type = std::uint8_t(bytes[at]);
    // Application data (TLS 1.3 encrypts all of its handshake under that type) and anything
    // unknown: the plaintext part is over.
    if (type != kChangeCipherSpec && type != kAlert && type != kHandshake) {
      return {Status::done, bytes.size()};
    }
    if (bytes.size() - at < 5) break;
    const std::size_t length = std::uint8_t(bytes[at + 3]) << 8 | std::uint8_t(bytes[at + 4]);
    if (bytes[at + 1] != 3 || length > kMaxRecord) {
      return malformed(at, "a TLS record header in the handshake is malformed");
    }
    // After ChangeCipherSpec, TLS 1.2's handshake records are encrypted (its Finished); TLS
    // 1.3's are plaintext only in the second ClientHello, after the server's HelloRetryRequest
    // (its compatibility mode sends a dummy ChangeCipherSpec before that hello).
    if (type == kHandshake && after_change_cipher_spec_) {
      if (!retry_request_) return {Status::needs_server, at};
      if (!*retry_request_) return {Status::done, bytes.size()};
    }
    if (bytes.size() - at < 5 + length) break;
    watched_ += 5 + length;
    if (watched_ > kMaxWatchedBytes) {
      return malformed(at, "the TLS handshake's plaintext goes on past " +
                               std::to_string(kMaxWatchedBytes) + " bytes");
    }
    if (type == kChangeCipherSpec) after_change_cipher_spec_ = true;
    if (type == kHandshake) {
      handshake_.append(bytes.substr(at + 5, length));
      if (auto refused = read_messages()) {
        refused->checked = at;
        return *refused;
      }
    }
    at += 5 + length;
  }
  return {Status::watching, at};
}

// The handshake messages gathered so far; a ClientHello is checked once whole, the others are
// skipped. Something only when refused.
std::optional<HandshakeWatch::Step> HandshakeWatch::read_messages() {
  while (true) {
    const std::size_t skipped = std::min(skipping_, handshake_.size());
    handshake_.erase(0, skipped);
    skipping_ -= skipped;
    if (skipping_ > 0 || handshake_.size() < 4) return std::nullopt;
    const auto type = std::uint8_t(handshake_[0]);
    const std::size_t length = std::uint8_t(handshake_[1]) << 16 |
                               std::uint8_t(handshake_[2]) << 8 | std::uint8_t(handshake_[3]);
    if (type != kClientHello) {
      skipping_ = 4 + length;
      continue;
    }
    if (length > kMaxHelloMessage) {
      return malformed(
          0, "a ClientHello is longer than " + std::to_string(kMaxHelloMessage) + " bytes");
    }
    if (handshake_.size() < 4 + length) return std::nullopt;
    if (auto refused = check(std::string_view(handshake_).substr(4, length))) return refused;
    handshake_.erase(0, 4 + length);
  }
}

std::optional<HandshakeWatch::Step> HandshakeWatch::check(std::string_view hello_body) {
  if (++hellos_ > kMaxClientHellos) {
    return malformed(0, "more than " + std::to_string(kMaxClientHellos) + " ClientHellos");
  }
  const HelloReading hello = read_client_hello_body(hello_body);
  if (hello.status != HelloReading::Status::complete) {
    return malformed(0, "a ClientHello is unreadable: " + hello.problem);
  }
  const bool first = hellos_ == 1;
  if (first) first_named_ = hello.server_name.has_value();
  const bool matches =
      hello.server_name ? normalize_host_name(*hello.server_name) == host_ : !first_named_;
  if (matches) return std::nullopt;
  Step step;
  step.status = Step::Status::name_mismatch;
  step.server_name = hello.server_name.value_or("");
  return step;
}

}  // namespace jail::egress
