#include "policy/diagnostics.hpp"

#include <algorithm>

namespace jail::policy {

std::string format(const Diagnostic& d) {
  std::string out = d.where.file;
  if (d.where.line > 0) {
    out += ":" + std::to_string(d.where.line) + ":" + std::to_string(d.where.column);
  }
  out += ": ";
  if (d.severity == Severity::warning) out += "warning: ";
  out += d.message;
  out += "\n";
  if (d.where.line > 0) {
    out += d.source_line + "\n";
    // Tabs stay tabs so the caret lines up under the same column in a terminal.
    std::string pad;
    for (int i = 0; i + 1 < d.where.column; ++i) {
      auto idx = static_cast<std::size_t>(i);
      pad += idx < d.source_line.size() && d.source_line[idx] == '\t' ? '\t' : ' ';
    }
    out += pad + "^\n";
  }
  return out;
}

std::string format(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) out += format(d);
  return out;
}

bool has_errors(const std::vector<Diagnostic>& ds) {
  return std::any_of(ds.begin(), ds.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::error; });
}

PolicyError::PolicyError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(format(diagnostics)), diagnostics_(std::move(diagnostics)) {}

}  // namespace jail::policy
