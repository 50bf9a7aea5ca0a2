// /proc/self/mountinfo, read by the cgroup layout (which hierarchies are mounted) and by a dry run
// (which bound directories hold other mounts).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace jail {

// A mountinfo field with the kernel's \ooo escapes (space, tab, newline, backslash) undone.
[[nodiscard]] std::string unescape_mountinfo(std::string_view field);

// The mount point (the fifth field) of every mount in a mountinfo text.
[[nodiscard]] std::vector<std::string> mount_points(std::string_view mountinfo);

}  // namespace jail
