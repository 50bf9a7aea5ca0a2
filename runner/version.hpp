// `jail --version`: what a bug report or an audit needs to know of this build.
#pragma once

#include <string>

namespace jail::runner {

// "jail X.Y.Z" and the libseccomp this process loaded (it compiles every filter, so its version
// decides what a policy becomes), one per line.
[[nodiscard]] std::string version_text();

}  // namespace jail::runner
