// Host side: a small ClientHello reader (RFC 8446 4.1.2, RFC 6066 3), only as far as the SNI.
#include "egress/client_hello.hpp"

#include <cstdint>

namespace jail::egress {

namespace {

constexpr std::uint8_t kHandshakeRecord = 22;
constexpr std::uint8_t kClientHello = 1;
constexpr std::uint16_t kServerNameExtension = 0;
constexpr std::uint8_t kHostName = 0;

// Bounds-checked big-endian reads over a byte range; any overrun marks the reader failed.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  std::uint32_t number(std::size_t width) {
    if (failed_ || bytes_.size() < width) return fail();
    std::uint32_t value = 0;
    for (std::size_t i = 0; i < width; ++i) value = value << 8 | std::uint8_t(bytes_[i]);
    bytes_.remove_prefix(width);
    return value;
  }
  std::string_view take(std::size_t count) {
    if (failed_ || bytes_.size() < count) {
      fail();
      return {};
    }
    const std::string_view taken = bytes_.substr(0, count);
    bytes_.remove_prefix(count);
    return taken;
  }
  // A length-prefixed vector: its length is `width` bytes.
  Reader vector(std::size_t width) {
    const std::string_view body = take(number(width));
    return Reader(body, failed_);
  }
  std::string_view rest() const { return bytes_; }

  [[nodiscard]] bool failed() const { return failed_; }
  [[nodiscard]] bool empty() const { return bytes_.empty(); }

 private:
  Reader(std::string_view bytes, bool failed) : bytes_(bytes), failed_(failed) {}
  std::uint32_t fail() {
    failed_ = true;
    return 0;
  }

  std::string_view bytes_;
  bool failed_ = false;
};

HelloReading malformed(std::string problem) {
  HelloReading reading;
  reading.status = HelloReading::Status::malformed;
  reading.problem = std::move(problem);
  return reading;
}

// The handshake message's bytes gathered from consecutive handshake records; nothing while
// incomplete. Sets `reading` when the bytes are no TLS or not a well-formed record stream.
std::optional<std::string> gather_handshake(std::string_view bytes, HelloReading& reading) {
  std::string handshake;
  bool first = true;
  while (true) {
    if (bytes.size() < 3) {
      if (first && !bytes.empty() && std::uint8_t(bytes[0]) != kHandshakeRecord) {
        reading.status = HelloReading::Status::not_tls;
      }
      return std::nullopt;
    }
    if (std::uint8_t(bytes[0]) != kHandshakeRecord || bytes[1] != 3) {
      if (first) {
        reading.status = HelloReading::Status::not_tls;
      } else {
        reading = malformed("the ClientHello is interleaved with another record type");
      }
      return std::nullopt;
    }
    first = false;
    if (bytes.size() < 5) return std::nullopt;
    const std::size_t length = std::uint8_t(bytes[3]) << 8 | std::uint8_t(bytes[4]);
    if (length == 0 || length > 16 * 1024) {
      reading = malformed("a TLS record of " + std::to_string(length) + " bytes");
      return std::nullopt;
    }
    if (bytes.size() < 5 + length) return std::nullopt;
    handshake.append(bytes.substr(5, length));
    bytes.remove_prefix(5 + length);
    if (handshake.size() < 4) continue;
    if (std::uint8_t(handshake[0]) != kClientHello) {
      reading = malformed("the first TLS handshake message is no ClientHello");
      return std::nullopt;
    }
    const std::size_t message = std::uint8_t(handshake[1]) << 16 | std::uint8_t(handshake[2]) << 8 |
                                std::uint8_t(handshake[3]);
    if (message > kMaxHelloMessage) {
      reading = malformed("the ClientHello is longer than " + std::to_string(kMaxHelloMessage) +
                          " bytes");
      return std::nullopt;
    }
    if (handshake.size() >= message + 4) return handshake.substr(4, message);
  }
}

}  // namespace

HelloReading read_client_hello(std::string_view bytes) {
  HelloReading reading;
  const auto handshake = gather_handshake(bytes.substr(0, kMaxHelloBytes), reading);
  if (!handshake) {
    // Records of a few bytes each could stretch a hello without end; no client sends those.
    if (reading.status == HelloReading::Status::need_more && bytes.size() >= kMaxHelloBytes) {
      return malformed("the ClientHello does not end within " + std::to_string(kMaxHelloBytes) +
                       " bytes");
    }
    return reading;
  }
  return read_client_hello_body(*handshake);
}

HelloReading read_client_hello_body(std::string_view message_body) {
  HelloReading reading;
  Reader hello(message_body);
  hello.take(2 + 32);  // legacy_version, random
  hello.vector(1);     // legacy_session_id
  hello.vector(2);     // cipher_suites
  hello.vector(1);     // legacy_compression_methods
  if (hello.failed()) return malformed("the ClientHello is cut short");
  reading.status = HelloReading::Status::complete;
  if (hello.empty()) return reading;  // no extensions at all (SSL 3.0-era clients)
  Reader extensions = hello.vector(2);
  if (hello.failed() || !hello.empty()) return malformed("the ClientHello's extensions overrun");
  bool seen = false;
  while (!extensions.empty()) {
    const auto type = extensions.number(2);
    Reader body = extensions.vector(2);
    if (extensions.failed()) return malformed("a ClientHello extension overruns");
    if (type != kServerNameExtension) continue;
    if (seen) return malformed("the ClientHello has two server_name extensions");
    seen = true;
    Reader names = body.vector(2);
    if (body.failed() || !body.empty()) return malformed("the server_name extension overruns");
    while (!names.empty()) {
      const auto name_type = names.number(1);
      const Reader name = names.vector(2);
      if (names.failed()) return malformed("a server name overruns");
      if (name_type != kHostName) continue;
      if (reading.server_name) return malformed("the ClientHello names two host names");
      if (name.rest().empty()) return malformed("the ClientHello's host name is empty");
      reading.server_name = std::string(name.rest());
    }
  }
  return reading;
}

}  // namespace jail::egress
