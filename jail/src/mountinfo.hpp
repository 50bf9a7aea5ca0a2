// /proc/self/mountinfo, read by the cgroup layout (which hierarchies are mounted) and by a dry run
// (which bound directories hold other mounts); and which mount a descriptor is on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jail {

// A mountinfo field with the kernel's \ooo escapes (space, tab, newline, backslash) undone.
[[nodiscard]] std::string unescape_mountinfo(std::string_view field);

// The mount point (the fifth field) of every mount in a mountinfo text.
[[nodiscard]] std::vector<std::string> mount_points(std::string_view mountinfo);

// The id of the mount `fd` (any descriptor, O_PATH included) is on: statx's unique id where the
// kernel has it (Linux 6.8; never reused), else its mount id; nullopt when statx cannot say.
[[nodiscard]] std::optional<std::uint64_t> mount_id_of(int fd);

}  // namespace jail
