// Host side: the client's side of a tunnelled TLS handshake, read record by record while it is
// plaintext, so that a second ClientHello (after a HelloRetryRequest) is checked like the first.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace jail::egress {

constexpr std::size_t kMaxWatchedBytes = 64 * 1024;  // plaintext records read, headers and all
constexpr std::size_t kMaxClientHellos = 4;

class HandshakeWatch {
 public:
  struct Step {
    enum class Status {
      watching,       // all whole records are checked; read more
      needs_server,   // a handshake record after ChangeCipherSpec: plaintext only after a
                      // HelloRetryRequest; call server_answered() first
      done,           // the handshake is encrypted from here: relay the rest unread
      name_mismatch,  // a ClientHello names another host, or none after one that did
      malformed,      // unreadable, or past the caps
    } status = Status::watching;
    std::size_t checked = 0;                 // leading bytes of the input that may be forwarded
    std::optional<std::string> server_name;  // name_mismatch: what it named ("" for none)
    std::string problem;                     // malformed
  };

  explicit HandshakeWatch(std::string connect_host);

  // `bytes` are the client's tunnel bytes from the first not yet `checked` one (the first call
  // gets them from the tunnel's start, the first ClientHello included).
  [[nodiscard]] Step feed(std::string_view bytes);
  void server_answered(bool retry_request);

 private:
  [[nodiscard]] std::optional<Step> read_messages();
  [[nodiscard]] std::optional<Step> check(std::string_view hello_body);

  std::string host_;  // normalized
  std::string handshake_;
  std::size_t skipping_ = 0;  // bytes of a message that is no ClientHello, still to come
  std::size_t watched_ = 0;
  std::size_t hellos_ = 0;
  bool first_named_ = false;
  bool after_change_cipher_spec_ = false;
  std::optional<bool> retry_request_;
};

}  // namespace jail::egress
