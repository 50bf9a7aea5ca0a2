// Parent side: the per-user kernel quotas a jail may use. inotify and fanotify instances and
// watches are counted per user in every user namespace up to the host's, so a tool that opened
// them until refused left its caller (host root, or the calling user) none while it ran. The
// init sets the jail's namespace's own limits to a quarter of the host's: the caller always
// keeps three quarters.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace jail {

// The fraction of the host's limit a jail gets.
inline constexpr unsigned kQuotaShareDivisor = 4;

// (/proc/sys/user/NAME, value) for each limit this kernel has: a quarter of the host's, at least
// 1. A limit the host does not have (an older kernel) is left out.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> jail_quotas();

}  // namespace jail
