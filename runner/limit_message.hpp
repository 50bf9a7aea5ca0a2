// What the jail command says when a limit ended or shaped a run. Exit codes 124 and 137 alone do
// not tell a person that it was --timeout or --memory (137 is any SIGKILL), so the limit is named
// with the value it had and the flag that set it.
#pragma once

#include <optional>
#include <string>

#include "jail/result.hpp"

namespace jail::runner {

// One line for the log, or nullopt when no limit was hit.
[[nodiscard]] std::optional<std::string> limit_message(const Result& result);

}  // namespace jail::runner
