// One UTF-8 sequence at a time, as strictly as JSON libraries read it, and which characters a
// terminal shows wrongly. Header-only: the rootfs library, which does not link jail's core,
// escapes what it prints with the same rules (byte_text.hpp, rootfs check).
#pragma once

#include <cstddef>
#include <string_view>

namespace jail::utf8 {

struct Sequence {
  std::size_t length = 0;  // 0: no valid sequence starts here
  char32_t code_point = 0;
};

// The sequence that starts at text[i] (Unicode's table of well-formed sequences): no overlong
// form, no surrogate, nothing above U+10FFFF. A looser reading let such a name into a manifest
// that nlohmann then refused to write.
[[nodiscard]] inline Sequence sequence_at(std::string_view text, std::size_t i) {
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
// holding one would print like another name, or print reordered. (C0 and DEL are the caller's.)
[[nodiscard]] inline bool shows_wrongly(char32_t c) {
  return (c >= 0x80 && c <= 0x9f) || c == 0xad || (c >= 0x200b && c <= 0x200f) ||
         (c >= 0x2028 && c <= 0x202e) || (c >= 0x2060 && c <= 0x2069) || c == 0xfeff;
}

}  // namespace jail::utf8
