// Diagnostics that point at the text: file:line:col, the line, and a caret under the column.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace jail::policy {

struct SourceLocation {
  std::string file;
  int line = 0;    // 1-based; 0 for things that come from no line (the architecture check)
  int column = 0;  // 1-based
};

enum class Severity { error, warning };

struct Diagnostic {
  Severity severity = Severity::error;
  SourceLocation where;
  std::string message;
  std::string source_line;  // the text of where.line, for the caret display
};

// "file:line:col: message\n<line>\n<spaces>^" (warnings say "warning: " before the message).
[[nodiscard]] std::string format(const Diagnostic& d);
[[nodiscard]] std::string format(const std::vector<Diagnostic>& ds);
[[nodiscard]] bool has_errors(const std::vector<Diagnostic>& ds);

class PolicyError : public std::runtime_error {
 public:
  explicit PolicyError(std::vector<Diagnostic> diagnostics);
  [[nodiscard]] const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace jail::policy
