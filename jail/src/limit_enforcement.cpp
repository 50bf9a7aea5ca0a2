#include "limit_enforcement.hpp"

#include <sys/resource.h>

#include <fmt/format.h>

namespace jail {

std::vector<std::pair<std::string, std::string>> limit_enforcement(const Limits& limits,
                                                                   int cgroup_version) {
  std::vector<std::pair<std::string, std::string>> how;
  const std::string cgroup = fmt::format("cgroup v{}, the whole jail", cgroup_version);
  if (limits.memory_bytes) how.emplace_back("memory_bytes", cgroup + ", swap off");
  if (limits.pids) how.emplace_back("pids", cgroup);
  if (limits.cpus) how.emplace_back("cpus", cgroup);
  if (limits.timeout)
    how.emplace_back("timeout_ms", "supervisor: SIGTERM to the tool, SIGKILL after the grace");
  // The rlimits as the tool got them: an --rlimit entry overrides the flag of its resource.
  for (const int resource : {RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE}) {
    if (!rlimit_in_force(limits, resource)) continue;
    const char* key = resource == RLIMIT_CPU     ? "cpu_time_s"
                      : resource == RLIMIT_FSIZE ? "max_file_size"
                                                 : "max_open_files";
    how.emplace_back(key, rlimit_constant_name(resource) + ", each process of the tool");
  }
  for (const Rlimit& entry : limits.rlimits) {
    if (entry.resource == RLIMIT_CPU || entry.resource == RLIMIT_FSIZE ||
        entry.resource == RLIMIT_NOFILE)
      continue;
    how.emplace_back(fmt::format("rlimits.{}", rlimit_name(entry.resource)),
                     rlimit_constant_name(entry.resource) + ", each process of the tool");
  }
  return how;
}

}  // namespace jail
