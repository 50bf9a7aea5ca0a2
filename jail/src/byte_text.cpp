#include "jail/byte_text.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace jail {
namespace {

struct Sequence {
  std::size_t length = 0;  // 0: no valid sequence starts here
  char32_t code_point = 0;
};

// The UTF-8 sequence that starts at text[i], as strictly as JSON libraries read it (Unicode's
// table of well-formed sequences): no overlong form, no surrogate, nothing above U+10FFFF. A
// looser reading let such a name into a manifest that nlohmann then refused to write.
Sequence sequence_at(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return {1, lead};
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the second byte's range, narrower after some leads
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;   // overlong below U+0800
    if (lead == 0xed) high = 0x9f;  // surrogates U+D800..U+DFFF
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;   // overlong below U+10000
    if (lead == 0xf4) high = 0x8f;  // above U+10FFFF
  } else {
    return {};
  }
  if (i + length > text.size() || byte(1) < low || byte(1) > high) return {};
  char32_t code_point = lead & (0x7f >> length);
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(k) >> 6) != 0x2) return {};
    code_point = (code_point << 6) | (byte(k) & 0x3f);
  }
  return {length, code_point};
}

// Characters a terminal shows as nothing or that reorder what follows: C1 controls, zero-width
// and bidirectional format characters, line and paragraph separators, the byte-order mark. A name
// holding one would print like another name, or print reordered.
bool shows_wrongly(char32_t c) {
  return (c >= 0x80 && c <= 0x9f) || c == 0xad || (c >= 0x200b && c <= 0x200f) ||
         (c >= 0x2028 && c <= 0x202e) || (c >= 0x2060 && c <= 0x2069) || c == 0xfeff;
}

}  // namespace

bool valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = sequence_at(text, i).length;
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
    const Sequence sequence = sequence_at(text, i);
    const std::size_t length = sequence.length;
    if (text[i] == '\\') {
      out += "\\\\";
      ++i;
    } else if (length == 1 && byte >= 0x20 && byte != 0x7f) {
      out += text[i++];
    } else if (length > 1 && !shows_wrongly(sequence.code_point)) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      // A control or format character, or a byte of no valid sequence: each byte, in hex.
      const std::size_t bytes = length == 0 ? 1 : length;
      for (std::size_t k = 0; k < bytes; ++k)
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i + k]));
      i += bytes;
    }
  }
  return out;
}

}  // namespace jail
