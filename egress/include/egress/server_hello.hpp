// Host side: whether a TLS server's first handshake message is a HelloRetryRequest (RFC 8446
// 4.1.4), after which a TLS 1.3 client sends a second ClientHello in plaintext.
#pragma once

#include <string_view>

namespace jail::egress {

enum class ServerAnswer {
  need_more,      // the first handshake message has not arrived far enough
  retry_request,  // a HelloRetryRequest: a second plaintext ClientHello is to come
  other,          // a ServerHello, an alert, no TLS at all: no plaintext ClientHello follows
};

// Reads the start of everything the server has sent in the tunnel.
[[nodiscard]] ServerAnswer read_server_answer(std::string_view bytes);

}  // namespace jail::egress
