// `jail rootfs build OUT …`: a root holding just what a tool needs.
#pragma once

namespace jail::runner {

// argv[0] is "rootfs".
[[nodiscard]] int run_rootfs_command(int argc, char** argv);

}  // namespace jail::runner
