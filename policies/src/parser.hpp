// The parser: tokens of each line → statements. Syntax errors are collected per line and the
// parser moves on to the next line, so one run reports every mistake in the file.
#pragma once

#include <string_view>

#include "ast.hpp"

namespace jail::policy::detail {

[[nodiscard]] ParsedFile parse_file(std::string_view text, std::string_view file_name);

// Splits text into lines (without the newline), for diagnostics.
[[nodiscard]] std::vector<std::string> split_lines(std::string_view text);

}  // namespace jail::policy::detail
