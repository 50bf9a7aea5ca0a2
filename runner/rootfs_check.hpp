// `jail rootfs check OUT [--all] [run options] -- COMMAND…`: runs COMMAND in the root OUT with
// its path lookups recorded, and reports the files it looked for that OUT lacks.
#pragma once

namespace jail::runner {

// argv[0] is "check". Exit status: 0 when OUT lacks nothing the host has, 1 when it does (or
// lacks the command itself), 2 for bad input or a run that could not be set up.
[[nodiscard]] int rootfs_check_command(int argc, char** argv);

}  // namespace jail::runner
