#include "rlimits.hpp"

#include <sys/resource.h>

#include <algorithm>

#include "user_quotas.hpp"

namespace jail {
namespace {

void set(std::vector<child::RlimitSetting>& list, int resource, rlim_t soft, rlim_t hard) {
  std::erase_if(list,
                [&](const child::RlimitSetting& entry) { return entry.resource == resource; });
  list.push_back({resource, soft, hard});
}

}  // namespace

std::vector<child::RlimitSetting> rlimits_for(const Limits& limits) {
  std::vector<child::RlimitSetting> list;
  if (!limits.core_dumps) set(list, RLIMIT_CORE, 0, 0);
  if (limits.cpu_time) {
    // SIGXCPU at the limit (catchable, so a tool can report), SIGKILL a second later.
    const auto seconds = static_cast<rlim_t>(limits.cpu_time->count());
    set(list, RLIMIT_CPU, seconds, seconds + 1);
  }
  if (limits.max_file_size) set(list, RLIMIT_FSIZE, *limits.max_file_size, *limits.max_file_size);
  if (limits.max_open_files)
    set(list, RLIMIT_NOFILE, *limits.max_open_files, *limits.max_open_files);
  // POSIX message queue bytes are charged to the tool's user in every user namespace up to the
  // host's, where an unprivileged caller's tool is the caller: a quarter of the caller's limit
  // leaves the caller the rest while a jail holds all it can (--rlimit msgqueue overrides it).
  if (rlimit own{}; ::getrlimit(RLIMIT_MSGQUEUE, &own) == 0 && own.rlim_cur != RLIM_INFINITY) {
    const rlim_t share = own.rlim_cur / kQuotaShareDivisor;
    set(list, RLIMIT_MSGQUEUE, share, share);
  }
  for (const Rlimit& entry : limits.rlimits) set(list, entry.resource, entry.soft, entry.hard);
  return list;
}

std::optional<Rlimit> rlimit_in_force(const Limits& limits, int resource) {
  const std::optional<Rlimit> set = rlimit_jail_sets(limits, resource);
  return set && set->soft != RLIM_INFINITY ? set : std::nullopt;
}

std::optional<Rlimit> rlimit_jail_sets(const Limits& limits, int resource) {
  for (const child::RlimitSetting& setting : rlimits_for(limits)) {
    if (setting.resource == resource) return Rlimit{resource, setting.soft, setting.hard};
  }
  return std::nullopt;
}

}  // namespace jail
