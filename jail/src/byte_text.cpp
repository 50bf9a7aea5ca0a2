#include "jail/byte_text.hpp"

#include "jail/utf8.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace jail {
namespace {

using utf8::Sequence;
using utf8::sequence_at;
using utf8::shows_wrongly;

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
  return escaped(text, true);
}

std::string printable_content(std::string_view text) {
  return escaped(text, false);
}

std::string escaped(std::string_view text, bool backslashes) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const Sequence sequence = sequence_at(text, i);
    const std::size_t length = sequence.length;
    if (text[i] == '\\' && backslashes) {
      out += "\\\\";
      ++i;
    } else if (!backslashes && (text[i] == '\t' || text[i] == '\n')) {
      out += text[i++];
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
