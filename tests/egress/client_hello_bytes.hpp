// Test support: TLS ClientHello records built byte by byte, with or without a server name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace jail::egress::test {

inline std::string big_endian(std::size_t value, int width) {
  std::string bytes;
  for (int i = width - 1; i >= 0; --i) bytes += static_cast<char>((value >> (8 * i)) & 0xff);
  return bytes;
}

inline std::string with_length(const std::string& body, int width) {
  return big_endian(body.size(), width) + body;
}

// A server_name extension naming one host.
inline std::string server_name_extension(const std::string& name) {
  const std::string entry = std::string(1, '\0') + with_length(name, 2);
  return std::string("\x00\x00", 2) + with_length(with_length(entry, 2), 2);
}

// A ClientHello handshake message (type, length, body); `extra` is appended to its extensions.
inline std::string client_hello_message(const std::optional<std::string>& server_name,
                                        std::size_t padding = 0, const std::string& extra = "") {
  std::string body = "\x03\x03" + std::string(32, '\x11');  // legacy_version, random
  body += with_length(std::string(32, '\x22'), 1);          // legacy_session_id
  body += with_length("\x13\x01\x13\x02", 2);               // cipher_suites
  body += with_length(std::string(1, '\0'), 1);             // compression: null
  std::string extensions;
  extensions += std::string("\x00\x2b", 2) +
                with_length(with_length("\x03\x04", 1), 2);  // supported_versions
  if (server_name) extensions += server_name_extension(*server_name);
  if (padding > 0)
    extensions += std::string("\x00\x15", 2) + with_length(std::string(padding, '\0'), 2);
  body += with_length(extensions + extra, 2);
  return "\x01" + with_length(body, 3);
}

// The message in TLS handshake records of at most `record_size` bytes each.
inline std::string in_records(const std::string& message, std::size_t record_size = 16384) {
  std::string records;
  for (std::size_t at = 0; at < message.size(); at += record_size) {
    records += "\x16\x03\x01" + with_length(message.substr(at, record_size), 2);
  }
  return records;
}

inline std::string client_hello(const std::optional<std::string>& server_name) {
  return in_records(client_hello_message(server_name));
}

}  // namespace jail::egress::test
