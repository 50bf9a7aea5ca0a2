// A word for a shell command line, whatever it holds: the checkout (and so JAIL_BINARY and the
// probe directory) may live under a path with a space, a quote or a dollar sign in it.
#pragma once

#include <string>
#include <string_view>

namespace jail_test {

// 'it'\''s' — single quotes, each quote inside closed, escaped and reopened.
inline std::string shell_quote(std::string_view word) {
  std::string quoted = "'";
  for (const char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

}  // namespace jail_test
