// Test support: TLS ClientHello records built byte by byte, with or without a server name, and
// the other records of a handshake around them.
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

// A record of another type: ChangeCipherSpec (20), alert (21), application data (23).
inline std::string record(std::uint8_t type, const std::string& body) {
  return std::string(1, static_cast<char>(type)) + "\x03\x03" + with_length(body, 2);
}

inline std::string change_cipher_spec() {
  return record(20, "\x01");
}

// A server's first handshake message: a ServerHello, or with `retry` a HelloRetryRequest (its
// random is RFC 8446's fixed value).
inline std::string server_hello(bool retry) {
  const std::string retry_random =
      "\xCF\x21\xAD\x74\xE5\x9A\x61\x11\xBE\x1D\x8C\x02\x1E\x65\xB8\x91"
      "\xC2\xA2\x11\x16\x7A\xBB\x8C\x5E\x07\x9E\x09\xE2\xC8\xA8\x33\x9C";
  std::string body = "\x03\x03" + (retry ? retry_random : std::string(32, '\x33'));
  body += with_length(std::string(32, '\x22'), 1);                     // legacy_session_id_echo
  body += std::string("\x13\x01\x00", 3);                              // cipher_suite, compression
  body += with_length(std::string("\x00\x2b\x00\x02\x03\x04", 6), 2);  // supported_versions
  return record(22, "\x02" + with_length(body, 3));
}

}  // namespace jail::egress::test
