// `jail explain [RUN OPTIONS] [-- COMMAND...]`: the run those flags (and a profile) would make,
// every field with where it came from, for a reviewer to sign off. Nothing is run.
#pragma once

#include <string>
#include <vector>

namespace jail::runner {

// 0 after printing, 125 (with the run's own message) for a bad flag or profile.
[[nodiscard]] int explain_command(const std::vector<std::string>& options,
                                  const std::vector<std::string>& command);

}  // namespace jail::runner
