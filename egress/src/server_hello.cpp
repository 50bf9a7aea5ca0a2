// Host side: a HelloRetryRequest is a ServerHello whose random is a fixed value (RFC 8446 4.1.3).
#include "egress/server_hello.hpp"

#include <cstdint>
#include <string>

namespace jail::egress {

namespace {

constexpr std::uint8_t kHandshakeRecord = 22;
constexpr std::uint8_t kServerHello = 2;
constexpr std::string_view kRetryRandom =
    "\xCF\x21\xAD\x74\xE5\x9A\x61\x11\xBE\x1D\x8C\x02\x1E\x65\xB8\x91"
    "\xC2\xA2\x11\x16\x7A\xBB\x8C\x5E\x07\x9E\x09\xE2\xC8\xA8\x33\x9C";
constexpr std::size_t kRandomAt = 4 + 2;  // handshake header, legacy_version

}  // namespace

ServerAnswer read_server_answer(std::string_view bytes) {
  std::string handshake;
  while (handshake.size() < kRandomAt + kRetryRandom.size()) {
    if (bytes.empty()) return ServerAnswer::need_more;
    if (std::uint8_t(bytes[0]) != kHandshakeRecord) return ServerAnswer::other;
    if (bytes.size() < 5) return ServerAnswer::need_more;
    const std::size_t length = std::uint8_t(bytes[3]) << 8 | std::uint8_t(bytes[4]);
    if (length == 0) return ServerAnswer::other;
    const std::string_view body = bytes.substr(5, length);
    handshake.append(body);
    if (std::uint8_t(handshake[0]) != kServerHello) return ServerAnswer::other;
    if (body.size() < length) break;
    bytes.remove_prefix(5 + length);
  }
  if (handshake.size() < kRandomAt + kRetryRandom.size()) return ServerAnswer::need_more;
  return handshake.substr(kRandomAt, kRetryRandom.size()) == kRetryRandom
             ? ServerAnswer::retry_request
             : ServerAnswer::other;
}

}  // namespace jail::egress
