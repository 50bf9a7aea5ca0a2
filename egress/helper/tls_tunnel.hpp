// Host side: the relay of a CONNECT tunnel that began with a TLS ClientHello, which reads the
// client's handshake while it is plaintext so that every ClientHello in it is checked.
#pragma once

#include <optional>
#include <string>

#include "egress/handshake_watch.hpp"
#include "report.hpp"

namespace jail::egress {

// Relays like relay(); `pending` holds the client's bytes read so far, from the tunnel's start.
// A refusal (a name_mismatch or malformed step) ends both sides and is returned, to be reported.
[[nodiscard]] std::optional<HandshakeWatch::Step> relay_tls(int client, int upstream,
                                                            const std::string& host,
                                                            std::string pending, Traffic& traffic);

}  // namespace jail::egress
