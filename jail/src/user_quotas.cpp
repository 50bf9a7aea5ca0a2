#include "user_quotas.hpp"

#include <algorithm>
#include <array>
#include <fstream>

namespace jail {

std::vector<std::pair<std::string, std::string>> jail_quotas() {
  constexpr std::array kShared = {"max_inotify_instances", "max_inotify_watches",
                                  "max_fanotify_groups", "max_fanotify_marks"};
  std::vector<std::pair<std::string, std::string>> quotas;
  for (const char* name : kShared) {
    const std::string path = std::string("/proc/sys/user/") + name;
    std::ifstream in(path);
    unsigned long long host = 0;
    if (!(in >> host)) continue;
    quotas.emplace_back(path, std::to_string(std::max(1ULL, host / kQuotaShareDivisor)));
  }
  return quotas;
}

}  // namespace jail
