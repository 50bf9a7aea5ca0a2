// `jail policy learn -o OUT [--default ACTION] [--merge EXISTING] [run options] -- COMMAND…`
#pragma once

#include <string>
#include <vector>

namespace jail::runner {

[[nodiscard]] int learn_command(const std::vector<std::string>& options,
                                const std::vector<std::string>& command);

}  // namespace jail::runner
