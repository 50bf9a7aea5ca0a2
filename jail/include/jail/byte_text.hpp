// File names and arguments are bytes: a tool may make a name that is not UTF-8, or one with a
// line break or a terminal's escape sequence in it. These say such text exactly, in JSON and on a
// terminal, without passing a byte through that changes what the reader sees.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace jail {

// Well-formed UTF-8 as JSON libraries require it: no overlong form, surrogate or code point
// above U+10FFFF.
[[nodiscard]] bool valid_utf8(std::string_view text);

// A JSON string when `text` is UTF-8, else {"hex": "…"} of its bytes; text_from reads either
// back and throws std::invalid_argument (or nlohmann's error) on a malformed value.
[[nodiscard]] nlohmann::json text_json(const std::string& text);
[[nodiscard]] std::string text_from(const nlohmann::json& j);

// `text` for a terminal: a backslash is "\\", and every byte that is a control character (C0,
// DEL, or C1 such as CSI written in UTF-8), a character shown as nothing or reordering what
// follows (zero-width and bidirectional format characters, U+2028/2029, U+FEFF) or not part of
// valid UTF-8 is "\xNN", so that no two names print alike and nothing printed moves the cursor,
// changes colours or reorders the line.
[[nodiscard]] std::string printable(std::string_view text);

// A file's text for a terminal (a diff's lines): as printable(), but tabs and line breaks stay,
// and a backslash is itself, so that source code reads as written. Nothing that moves the
// cursor or changes what the reader sees gets through.
[[nodiscard]] std::string printable_content(std::string_view text);

// printable() with `backslashes` doubled, printable_content() without.
[[nodiscard]] std::string escaped(std::string_view text, bool backslashes);

}  // namespace jail
