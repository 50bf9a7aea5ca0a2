#include "lexer.hpp"

#include <cctype>
#include <limits>

namespace jail::policy::detail {
namespace {

bool ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Parses dec, 0x hex and 0-prefixed octal; a number too big for 64 bits is an error rather
// than a silent wrap, because a wrapped mask would change what a rule matches.
Token lex_number(std::string_view line, std::size_t start) {
  std::size_t i = start;
  while (i < line.size() && ident_char(line[i])) ++i;
  Token t;
  t.column = static_cast<int>(start) + 1;
  t.length = static_cast<int>(i - start);
  t.text = std::string(line.substr(start, i - start));
  unsigned base = 10;
  std::size_t digits = 0;
  if (t.text.size() > 2 && t.text[0] == '0' && (t.text[1] == 'x' || t.text[1] == 'X')) {
    base = 16;
    digits = 2;
  } else if (t.text.size() > 1 && t.text[0] == '0') {
    base = 8;
    digits = 1;
  }
  std::uint64_t value = 0;
  for (std::size_t k = digits; k < t.text.size(); ++k) {
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(t.text[k])));
    unsigned d = 99;
    if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
    if (c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
    if (d >= base) {
      t.kind = Tok::invalid;
      t.text = "malformed number '" + t.text + "'";
      return t;
    }
    if (value > (std::numeric_limits<std::uint64_t>::max() - d) / base) {
      t.kind = Tok::invalid;
      t.text = "number '" + t.text + "' does not fit in 64 bits";
      return t;
    }
    value = value * base + d;
  }
  t.kind = Tok::number;
  t.number = value;
  return t;
}

}  // namespace

std::vector<Token> lex_line(std::string_view line) {
  std::vector<Token> out;
  std::size_t i = 0;
  auto punct = [&](Tok kind, int len) {
    Token t;
    t.kind = kind;
    t.column = static_cast<int>(i) + 1;
    t.length = len;
    t.text = std::string(line.substr(i, static_cast<std::size_t>(len)));
    out.push_back(std::move(t));
    i += static_cast<std::size_t>(len);
  };
  while (i < line.size()) {
    char c = line[i];
    char next = i + 1 < line.size() ? line[i + 1] : '\0';
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
    } else if (c == '#') {
      break;
    } else if (ident_start(c)) {
      std::size_t s = i;
      while (i < line.size() && ident_char(line[i])) ++i;
      Token t;
      t.kind = Tok::ident;
      t.column = static_cast<int>(s) + 1;
      t.length = static_cast<int>(i - s);
      t.text = std::string(line.substr(s, i - s));
      out.push_back(std::move(t));
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      Token t = lex_number(line, i);
      i += static_cast<std::size_t>(t.length);
      out.push_back(std::move(t));
    } else if (c == '-' && std::isdigit(static_cast<unsigned char>(next))) {
      // -N is the 64-bit two's complement, as a C int sign-extends into a register; rules on
      // 32-bit arguments then compare its low half (AT_FDCWD, -1 for "any").
      Token t = lex_number(line, i + 1);
      t.column = static_cast<int>(i) + 1;
      t.length += 1;
      if (t.kind == Tok::number) {
        t.text = "-" + t.text;
        if (t.number > (std::uint64_t{1} << 63)) {
          t.kind = Tok::invalid;
          t.text = "number '" + t.text + "' does not fit in 64 bits";
        } else {
          t.number = ~t.number + 1;
        }
      }
      i += static_cast<std::size_t>(t.length);
      out.push_back(std::move(t));
    } else if (c == '"') {
      std::size_t s = i++;
      while (i < line.size() && line[i] != '"') ++i;
      Token t;
      t.column = static_cast<int>(s) + 1;
      if (i >= line.size()) {
        t.kind = Tok::invalid;
        t.text = "unterminated string (missing closing '\"')";
        t.length = static_cast<int>(line.size() - s);
      } else {
        t.kind = Tok::string;
        t.text = std::string(line.substr(s + 1, i - s - 1));
        t.length = static_cast<int>(i - s + 1);
        ++i;
      }
      out.push_back(std::move(t));
    } else if (c == '&' && next == '&') {
      punct(Tok::and_and, 2);
    } else if (c == '|' && next == '|') {
      punct(Tok::or_or, 2);
    } else if (c == '=' && next == '=') {
      punct(Tok::eq, 2);
    } else if (c == '!' && next == '=') {
      punct(Tok::ne, 2);
    } else if (c == '<' && next == '=') {
      punct(Tok::le, 2);
    } else if (c == '>' && next == '=') {
      punct(Tok::ge, 2);
    } else if (c == '<') {
      punct(Tok::lt, 1);
    } else if (c == '>') {
      punct(Tok::gt, 1);
    } else if (c == '&') {
      punct(Tok::amp, 1);
    } else if (c == '|') {
      punct(Tok::pipe, 1);
    } else if (c == '(') {
      punct(Tok::lparen, 1);
    } else if (c == ')') {
      punct(Tok::rparen, 1);
    } else if (c == '{') {
      punct(Tok::lbrace, 1);
    } else if (c == '}') {
      punct(Tok::rbrace, 1);
    } else if (c == ',') {
      punct(Tok::comma, 1);
    } else {
      Token t;
      t.kind = Tok::invalid;
      t.column = static_cast<int>(i) + 1;
      t.text = c == '='   ? std::string("'=' is not an operator; use '==' to compare")
               : c == '!' ? std::string("'!' is not an operator; use '!=' to compare")
                          : "unexpected character '" + std::string(1, c) + "'";
      out.push_back(std::move(t));
      ++i;
    }
  }
  Token end;
  end.kind = Tok::end;
  end.column = static_cast<int>(line.size()) + 1;
  out.push_back(std::move(end));
  return out;
}

std::string_view describe(Tok kind) {
  switch (kind) {
    case Tok::ident:
      return "a name";
    case Tok::number:
      return "a number";
    case Tok::string:
      return "a string";
    case Tok::lparen:
      return "'('";
    case Tok::rparen:
      return "')'";
    case Tok::lbrace:
      return "'{'";
    case Tok::rbrace:
      return "'}'";
    case Tok::comma:
      return "','";
    case Tok::amp:
      return "'&'";
    case Tok::pipe:
      return "'|'";
    case Tok::and_and:
      return "'&&'";
    case Tok::or_or:
      return "'||'";
    case Tok::eq:
      return "'=='";
    case Tok::ne:
      return "'!='";
    case Tok::lt:
      return "'<'";
    case Tok::le:
      return "'<='";
    case Tok::gt:
      return "'>'";
    case Tok::ge:
      return "'>='";
    case Tok::end:
      return "end of line";
    case Tok::invalid:
      return "an invalid token";
  }
  return "?";
}

}  // namespace jail::policy::detail
