// `jail diff A.toml B.toml [--format json]`: where the run profile B makes differs from the run
// A makes, and whether B lets the tool do more. A CI gate on a profile change, as `jail policy
// diff` is on a policy change.
#pragma once

namespace jail::runner {

// 0: B is nowhere wider than A; 1: B is wider somewhere; 2: a profile (or a policy it names)
// cannot be read, or the arguments are wrong.
[[nodiscard]] int diff_command(int argc, char** argv);

}  // namespace jail::runner
