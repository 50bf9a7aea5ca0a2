// `jail [OPTIONS] -- COMMAND…` (also `jail run …`): flags → jail::Spec → run → exit code.
#pragma once

#include <string>
#include <vector>

namespace jail::runner {

// `options` are the words before "--" (without "jail" or "run"), `command` the words after it.
[[nodiscard]] int run_command(const std::vector<std::string>& options,
                              const std::vector<std::string>& command);

}  // namespace jail::runner
