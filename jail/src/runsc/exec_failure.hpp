// Parent side: why runsc could not start the tool. runsc exits 128 for its own failures, among
// them the tool's command not found or not executable, which a native run reports as exit 127
// or 126 (the exit-code contract); runsc says which in its error line.
#pragma once

#include <optional>
#include <string_view>

namespace jail {

// How the tool's exec failed, as runsc's error text says.
struct RunscExecFailure {
  int err = 0;
  // "failed to load /x: ...": runsc had a path and loading it failed, where "error finding
  // executable" is its search of PATH. A load's ENOENT is either the file or its #!
  // interpreter (ELF loader) missing; runsc's words do not say which.
  bool loading = false;
};

// The failure of the tool's exec that runsc's error text reports — "error finding executable
// \"x\" in PATH [...]: no such file or directory", "failed to load /x: permission denied" —
// or nullopt when the text is about something else (or in words not known here). `text` is
// runsc's --log (a JSON object a line) or its stderr.
[[nodiscard]] std::optional<RunscExecFailure> exec_failure_in_runsc_error(std::string_view text);

}  // namespace jail
