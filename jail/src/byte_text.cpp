#include "jail/byte_text.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace jail {
namespace {

// The length of the UTF-8 sequence that starts at text[i], or 0 when none valid does.
std::size_t sequence_length(std::string_view text, std::size_t i) {
  const auto byte = static_cast<unsigned char>(text[i]);
  const std::size_t length = byte < 0x80           ? 1
                             : (byte >> 5) == 0x6  ? 2
                             : (byte >> 4) == 0xe  ? 3
                             : (byte >> 3) == 0x1e ? 4
                                                   : 0;
  if (length == 0 || i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k)
    if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return 0;
  return length;
}

}  // namespace

bool valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = sequence_length(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

nlohmann::json text_json(const std::string& text) {
  if (valid_utf8(text)) return text;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    hex += kHex[byte >> 4];
    hex += kHex[byte & 0xf];
  }
  return nlohmann::json{{"hex", hex}};
}

std::string text_from(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  const std::string hex = j.at("hex").get<std::string>();
  if (hex.size() % 2 != 0) throw std::invalid_argument("odd hex text");
  std::string out;
  for (std::size_t i = 0; i < hex.size(); i += 2)
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

std::string printable(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const std::size_t length = sequence_length(text, i);
    // U+0080..U+009F, the C1 controls, are 0xc2 0x80..0x9f in UTF-8.
    const bool c1 = length == 2 && byte == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0;
    if (text[i] == '\\') {
      out += "\\\\";
      ++i;
    } else if (length == 1 && byte >= 0x20 && byte != 0x7f) {
      out += text[i++];
    } else if (length > 1 && !c1) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      // A control character, or a byte of no valid sequence: each byte of it, in hex.
      const std::size_t bytes = length == 0 ? 1 : length;
      for (std::size_t k = 0; k < bytes; ++k)
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i + k]));
      i += bytes;
    }
  }
  return out;
}

}  // namespace jail
