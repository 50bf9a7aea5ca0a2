// The syntax tree of one policy file: names still unresolved, every piece with its column, so
// the lowering step can point at the exact token it rejects.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "policy/policy.hpp"

namespace jail::policy::detail {

struct Atom {  // a number or a named constant
  bool is_number = false;
  std::uint64_t number = 0;
  std::string name;
  int column = 1;
};

struct ValueExpr {  // A | B | 0x10
  std::vector<Atom> atoms;
};

struct CondNode {
  enum class Kind { compare, in_set, all_of, any_of };
  Kind kind = Kind::compare;
  int arg = 0;
  int arg_column = 1;
  std::optional<ValueExpr> mask;  // (argN & MASK)
  CmpOp op = CmpOp::eq;
  std::vector<ValueExpr> values;  // one for compare, several for in_set
  std::vector<CondNode> operands;
};

struct ActionNode {
  ActionKind kind = ActionKind::kill;
  bool quiet = false;  // "quietly errno ..."
  std::optional<Atom> errno_atom;
  int column = 1;
};

struct SyscallName {
  std::string name;
  int column = 1;
};

struct Statement {
  enum class Kind { default_action, include, within, rule };
  Kind kind = Kind::rule;
  int line = 0;
  ActionNode action;
  std::string include_target;  // also the bound of `within`
  int include_column = 1;
  std::vector<SyscallName> syscalls;
  std::optional<CondNode> condition;
  std::string condition_text;
};

struct ParsedFile {
  std::vector<Statement> statements;
  std::vector<Diagnostic> diagnostics;
  std::vector<std::string> lines;
};

}  // namespace jail::policy::detail
