// Host side: the server name (SNI) of a TLS ClientHello a tool sends through a CONNECT tunnel,
// so a tunnel opened to an allowed host cannot ask a shared server for another site.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace jail::egress {

constexpr std::size_t kMaxHelloMessage = 16 * 1024;  // the ClientHello message itself
constexpr std::size_t kMaxHelloBytes = 32 * 1024;    // the records carrying it, headers and all

struct HelloReading {
  enum class Status {
    not_tls,    // the first bytes start no TLS handshake: nothing to check
    need_more,  // a ClientHello has begun; read more
    complete,   // the whole ClientHello is read; server_name set if it names one
    malformed,  // it claims to be a ClientHello but is none, or is too long
  } status = Status::need_more;
  std::optional<std::string> server_name;
  std::string problem;  // when malformed
};

// Reads the ClientHello at the start of `bytes` (all of the client's bytes so far), which may
// span several TLS records.
[[nodiscard]] HelloReading read_client_hello(std::string_view bytes);

// Reads one ClientHello message's body (after its 4-byte handshake header): complete or
// malformed.
[[nodiscard]] HelloReading read_client_hello_body(std::string_view message_body);

}  // namespace jail::egress
