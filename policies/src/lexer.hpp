// The lexer: one line of policy text → tokens. Policies are line-oriented, so the parser asks
// for one line at a time and a mistake never swallows the lines after it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jail::policy::detail {

enum class Tok {
  ident,    // allow, read, arg0, AF_UNIX, …
  number,   // 42, 0x5412, 0644
  string,   // "other.policy" (text holds the contents without quotes)
  lparen,   // (
  rparen,   // )
  lbrace,   // {
  rbrace,   // }
  comma,    // ,
  amp,      // &
  pipe,     // |
  and_and,  // &&
  or_or,    // ||
  eq,       // ==
  ne,       // !=
  lt,       // <
  le,       // <=
  gt,       // >
  ge,       // >=
  end,      // end of the line
  invalid,  // a character or literal the language does not have; text says why
};

struct Token {
  Tok kind = Tok::end;
  std::string text;
  std::uint64_t number = 0;
  int column = 1;  // 1-based
  int length = 1;
};

// Tokens of one line, comments dropped, always ending with Tok::end.
[[nodiscard]] std::vector<Token> lex_line(std::string_view line);

[[nodiscard]] std::string_view describe(Tok kind);

}  // namespace jail::policy::detail
