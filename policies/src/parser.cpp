#include "parser.hpp"

#include <array>

#include "lexer.hpp"
#include "policy/suggest.hpp"

namespace jail::policy::detail {
namespace {

struct SyntaxError {
  int column;
  std::string message;
};

constexpr std::array<std::string_view, 9> kKeywords = {
    "allow", "errno", "kill", "log", "trap", "default", "include", "within", "quietly"};

std::optional<ActionKind> action_keyword(std::string_view word) {
  if (word == "allow") return ActionKind::allow;
  if (word == "errno") return ActionKind::errno_code;
  if (word == "kill") return ActionKind::kill;
  if (word == "log") return ActionKind::log;
  if (word == "trap") return ActionKind::trap;
  return std::nullopt;
}

// argN → N, or -1 for a name that is not an argument, or -2 for argN with N out of range.
int argument_index(std::string_view word) {
  if (word.size() < 4 || word.substr(0, 3) != "arg") return -1;
  for (char c : word.substr(3))
    if (c < '0' || c > '9') return -1;
  if (word.size() != 4 || word[3] > '5') return -2;
  return word[3] - '0';
}

class LineParser {
 public:
  explicit LineParser(std::vector<Token> tokens) : toks_(std::move(tokens)) {}

  Statement statement(int line_no, std::string_view line) {
    Statement st;
    st.line = line_no;
    const Token& first = peek();
    if (first.kind != Tok::ident)
      fail(first, "expected an action, 'default', 'include' or 'within'");
    if (first.text == "default") {
      next();
      st.kind = Statement::Kind::default_action;
      if (peek().kind == Tok::ident && peek().text == "quietly") {
        fail(peek(),
             "a default cannot be 'quietly': every call it refuses is one nobody "
             "expected, so it is reported; mark single rules quietly instead");
      }
      st.action = action();
      expect_end("after the default action");
      return st;
    }
    if (first.text == "include" || first.text == "within") {
      next();
      st.kind = first.text == "include" ? Statement::Kind::include : Statement::Kind::within;
      const Token& target = peek();
      if (target.kind != Tok::string)
        fail(target, "expected a quoted file or policy name after '" + first.text + "'");
      st.include_target = target.text;
      st.include_column = target.column;
      next();
      expect_end("after the included name");
      return st;
    }
    if (!action_keyword(first.text) && first.text != "quietly") {
      std::string msg = "unknown action '" + first.text + "'";
      std::vector<std::string> keywords(kKeywords.begin(), kKeywords.end());
      auto hint = did_you_mean(first.text, keywords);
      msg += hint.empty()
                 ? " (expected allow, errno, kill, log, trap, quietly, default, include or within)"
                 : hint;
      fail(first, msg);
    }
    st.kind = Statement::Kind::rule;
    st.action = action();
    while (peek().kind == Tok::ident && peek().text != "if") {
      st.syscalls.push_back(SyscallName{peek().text, peek().column});
      next();
    }
    if (st.syscalls.empty()) fail(peek(), "expected a syscall name after the action");
    if (peek().kind == Tok::ident && peek().text == "if") {
      next();
      int start = peek().column;
      st.condition = or_expr();
      expect_end("after the condition");
      int stop = toks_[pos_ - 1].column + toks_[pos_ - 1].length;
      st.condition_text = std::string(
          line.substr(static_cast<std::size_t>(start - 1), static_cast<std::size_t>(stop - start)));
    } else {
      expect_end("after the syscall names (a condition starts with 'if')");
    }
    return st;
  }

 private:
  const Token& peek() const { return toks_[pos_]; }
  void next() {
    if (toks_[pos_].kind != Tok::end) ++pos_;
  }
  [[noreturn]] static void fail(const Token& t, std::string message) {
    if (t.kind == Tok::invalid) throw SyntaxError{t.column, t.text};
    throw SyntaxError{t.column, std::move(message)};
  }
  static std::string found(const Token& t) {
    if (t.kind == Tok::end) return "end of line";
    return "'" + t.text + "'";
  }
  void expect(Tok kind, std::string_view what) {
    if (peek().kind != kind)
      fail(peek(), "expected " + std::string(describe(kind)) + " " + std::string(what) +
                       ", found " + found(peek()));
    next();
  }
  void expect_end(std::string_view where) {
    if (peek().kind != Tok::end)
      fail(peek(), "unexpected " + found(peek()) + " " + std::string(where));
  }

  ActionNode action() {
    ActionNode a;
    a.column = peek().column;
    // "quietly errno ENOSYS clone3": an expected refusal, answered in the kernel and not
    // reported (the rule's own policy decides it; see LANGUAGE.md).
    if (peek().kind == Tok::ident && peek().text == "quietly") {
      a.quiet = true;
      next();
    }
    const Token& t = peek();
    auto kind = t.kind == Tok::ident ? action_keyword(t.text) : std::nullopt;
    if (!kind) fail(t, "expected an action (allow, errno, kill, log, trap), found " + found(t));
    if (a.quiet && *kind != ActionKind::errno_code) {
      fail(t,
           "'quietly' goes with errno only: a kill, log or trap is always reported, and an "
           "allow never is");
    }
    a.kind = *kind;
    next();
    if (a.kind == ActionKind::errno_code) {
      const Token& v = peek();
      if (v.kind == Tok::number) {
        a.errno_atom = Atom{true, v.number, "", v.column};
      } else if (v.kind == Tok::ident && v.text != "if") {
        a.errno_atom = Atom{false, 0, v.text, v.column};
      } else {
        fail(v, "'errno' needs a value: a name like EPERM or a number");
      }
      next();
    }
    return a;
  }

  CondNode or_expr() {
    CondNode left = and_expr();
    if (peek().kind != Tok::or_or) return left;
    CondNode node;
    node.kind = CondNode::Kind::any_of;
    node.operands.push_back(std::move(left));
    while (peek().kind == Tok::or_or) {
      next();
      node.operands.push_back(and_expr());
    }
    return node;
  }

  CondNode and_expr() {
    CondNode left = primary();
    if (peek().kind != Tok::and_and) return left;
    CondNode node;
    node.kind = CondNode::Kind::all_of;
    node.operands.push_back(std::move(left));
    while (peek().kind == Tok::and_and) {
      next();
      node.operands.push_back(primary());
    }
    return node;
  }

  // '(' starts either a group or a masked operand "(argN & MASK)"; one token of lookahead
  // past the argument name tells them apart.
  CondNode primary() {
    if (peek().kind == Tok::lparen) {
      bool masked = toks_[pos_ + 1].kind == Tok::ident &&
                    argument_index(toks_[pos_ + 1].text) != -1 && toks_[pos_ + 2].kind == Tok::amp;
      if (!masked) {
        next();
        CondNode inner = or_expr();
        expect(Tok::rparen, "to close the group");
        return inner;
      }
    }
    return comparison();
  }

  CondNode comparison() {
    CondNode node;
    node.kind = CondNode::Kind::compare;
    bool open = peek().kind == Tok::lparen;
    if (open) next();
    const Token& arg = peek();
    int index = arg.kind == Tok::ident ? argument_index(arg.text) : -1;
    if (index == -2) fail(arg, "no argument '" + arg.text + "': syscalls have arg0 … arg5");
    if (index < 0) fail(arg, "expected an argument (arg0 … arg5), found " + found(arg));
    node.arg = index;
    node.arg_column = arg.column;
    next();
    if (open) {
      expect(Tok::amp, "in a masked argument '(argN & MASK)'");
      node.mask = value();
      expect(Tok::rparen, "to close '(argN & MASK'");
    } else if (peek().kind == Tok::amp) {
      fail(peek(), "put a mask in parentheses: (" + arg.text + " & MASK) == VALUE");
    }
    const Token& op = peek();
    switch (op.kind) {
      case Tok::eq:
        node.op = CmpOp::eq;
        break;
      case Tok::ne:
        node.op = CmpOp::ne;
        break;
      case Tok::lt:
        node.op = CmpOp::lt;
        break;
      case Tok::le:
        node.op = CmpOp::le;
        break;
      case Tok::gt:
        node.op = CmpOp::gt;
        break;
      case Tok::ge:
        node.op = CmpOp::ge;
        break;
      default:
        if (op.kind == Tok::ident && op.text == "in") {
          next();
          node.kind = CondNode::Kind::in_set;
          expect(Tok::lbrace, "after 'in'");
          node.values.push_back(value());
          while (peek().kind == Tok::comma) {
            next();
            node.values.push_back(value());
          }
          expect(Tok::rbrace, "to close the set");
          return node;
        }
        fail(op, "expected a comparison (== != < <= > >= or 'in'), found " + found(op));
    }
    next();
    node.values.push_back(value());
    return node;
  }

  ValueExpr value() {
    ValueExpr v;
    auto one = [&] {
      if (peek().kind != Tok::lparen) return v.atoms.push_back(atom());
      ValueExpr inner = grouped_value();
      v.atoms.insert(v.atoms.end(), inner.atoms.begin(), inner.atoms.end());
    };
    one();
    while (peek().kind == Tok::pipe) {
      next();
      one();
    }
    return v;
  }

  // Values may be grouped for readability: (CLONE_NEWUSER | CLONE_NEWNS).
  ValueExpr grouped_value() {
    next();
    ValueExpr inner = value();
    expect(Tok::rparen, "to close the value group");
    return inner;
  }

  Atom atom() {
    const Token& t = peek();
    Atom a;
    a.column = t.column;
    if (t.kind == Tok::number) {
      a.is_number = true;
      a.number = t.number;
    } else if (t.kind == Tok::ident) {
      a.name = t.text;
    } else {
      fail(t, "expected a number or a constant name, found " + found(t));
    }
    next();
    return a;
  }

  std::vector<Token> toks_;
  std::size_t pos_ = 0;
};

}  // namespace

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      if (start < text.size()) lines.emplace_back(text.substr(start));
      break;
    }
    lines.emplace_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

ParsedFile parse_file(std::string_view text, std::string_view file_name) {
  ParsedFile out;
  out.lines = split_lines(text);
  for (std::size_t i = 0; i < out.lines.size(); ++i) {
    const std::string& line = out.lines[i];
    std::vector<Token> tokens = lex_line(line);
    if (tokens.front().kind == Tok::end) continue;  // blank or comment-only
    int line_no = static_cast<int>(i) + 1;
    try {
      LineParser parser(std::move(tokens));
      out.statements.push_back(parser.statement(line_no, line));
    } catch (const SyntaxError& e) {
      out.diagnostics.push_back(
          Diagnostic{Severity::error, SourceLocation{std::string(file_name), line_no, e.column},
                     e.message, line});
    }
  }
  return out;
}

}  // namespace jail::policy::detail
