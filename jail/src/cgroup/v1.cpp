// cgroup v1 (and the v1 side of hybrid mode): one directory per hierarchy in use.
//
// v1 has no CLONE_INTO_CGROUP for jail's purposes and no cgroup.kill, so the child joins its
// cgroups itself through `tasks` files opened here (or is attached by pid), before it runs
// anything, and is killed pid by pid (group.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "log.hpp"

#include "files.hpp"
#include "state.hpp"

namespace jail::cgroup::v1 {

namespace {

// The CFS period the kernel defaults to; the quota is a share of it.
constexpr uint64_t kCfsPeriodUs = 100000;
// The kernel refuses quotas under 1 ms.
constexpr uint64_t kCfsMinQuotaUs = 1000;

void write_limit(const std::string& dir, const std::string& file, const std::string& value,
                 const std::string& step) {
  const std::string path = dir + "/" + file;
  if (const int err = files::write(path, value)) {
    std::string advice = advice_for(err);
    if (err == EINVAL && file == "cpu.cfs_quota_us") {
      advice = "a parent cgroup has a smaller cpu quota; ask for fewer --cpus";
    } else if (err == EBUSY || (err == EINVAL && file.starts_with("memory."))) {
      advice = "the value is below what the cgroup already uses or above the parent's limit";
    }
    fail(step, err, fmt::format("write {} to {}", value, path), advice);
  }
}

// A hierarchy co-mounting cpuset with a controller jail uses starts each new cgroup with no
// cpus and no memory nodes, and the kernel refuses to attach tasks to it (ENOSPC).
void inherit_cpuset(const std::string& parent, const std::string& dir, const std::string& step) {
  for (const char* file : {"cpuset.cpus", "cpuset.mems"}) {
    const auto value = files::read(parent + "/" + file);
    if (!value) continue;
    write_limit(dir, file, *value, step);
  }
}

}  // namespace

void setup(Group::State& state, const Limits& limits,
           const std::optional<std::string>& parent_override, const Layout& layout) {
  state.version = 1;
  struct Want {
    const char* controller;
    bool required;  // a limit was asked for; otherwise only accounting, skipped if impossible
  };
  const Want wants[] = {{"memory", limits.memory_bytes.has_value()},
                        {"pids", limits.pids.has_value()},
                        // Without --cpus too: in a scheduling group of its own the jail
                        // competes for the CPUs as one entity, however many threads it runs.
                        {"cpu", limits.cpus.has_value()},
                        {"cpuacct", false}};
  const std::string name = files::unique_name();
  for (const Want& want : wants) {
    const std::string step = fmt::format("cgroup {}", want.controller);
    const Hierarchy* h = layout.v1_with(want.controller);
    if (h == nullptr) {
      if (want.required) {
        fail(step, ENOENT, fmt::format("find a mounted cgroup v1 {} controller", want.controller),
             "mount it, or run without the limit that needs it");
      }
      continue;
    }
    if (state.dir_with(want.controller) != nullptr) continue;  // co-mounted, e.g. cpu,cpuacct
    const std::string parent = parent_override ? h->dir_of(*parent_override) : h->own_dir;
    // A parent named by the caller is asked for whatever the controller is for.
    const bool required = want.required || parent_override.has_value();
    if (parent.empty()) {
      if (required) {
        fail(step, ENOENT,
             fmt::format("place a cgroup under {} in the {} hierarchy at {}",
                         parent_override.value_or(h->own_path), want.controller, h->mount_point),
             "that cgroup is outside what this mount shows (a cgroup namespace or bind mount)");
      }
      continue;
    }
    const std::string path = parent + "/" + name;
    files::remove_stale_jails(parent);
    if (::mkdir(path.c_str(), 0755) != 0) {
      const int err = errno;
      if (required) fail(step, err, fmt::format("create {}", path), advice_for(err));
      jail::log().debug("cgroup: no {} accounting: cannot create {}: {}", want.controller, path,
                        files::errno_text(err));
      continue;
    }
    state.dirs.push_back({path, h->controllers});
    if (h->has("cpuset")) inherit_cpuset(parent, path, step);
  }

  if (limits.memory_bytes) {
    const std::string dir = state.dir_with("memory")->path;
    const std::string bytes = std::to_string(*limits.memory_bytes);
    // memsw must never be below the plain limit, so the plain limit goes first.
    write_limit(dir, "memory.limit_in_bytes", bytes, "cgroup memory limit");
    if (files::exists(dir + "/memory.memsw.limit_in_bytes")) {
      // RAM + swap equal to RAM alone: the jail gets no swap at all.
      write_limit(dir, "memory.memsw.limit_in_bytes", bytes, "cgroup memory+swap limit");
    } else {
      // Without swap accounting (swapaccount=0) the next best is to make reclaim avoid swap.
      write_limit(dir, "memory.swappiness", "0", "cgroup memory swappiness");
    }
  }
  if (limits.pids) {
    write_limit(state.dir_with("pids")->path, "pids.max", std::to_string(*limits.pids),
                "cgroup pids limit");
  }
  if (limits.cpus) {
    const std::string dir = state.dir_with("cpu")->path;
    const auto quota = std::max<uint64_t>(
        kCfsMinQuotaUs,
        static_cast<uint64_t>(std::ceil(*limits.cpus * static_cast<double>(kCfsPeriodUs))));
    write_limit(dir, "cpu.cfs_period_us", std::to_string(kCfsPeriodUs), "cgroup cpu period");
    write_limit(dir, "cpu.cfs_quota_us", std::to_string(quota), "cgroup cpu quota");
  }
}

void attach(const Group::State& state, pid_t pid) {
  for (const auto& dir : state.dirs) {
    const std::string path = dir.path + "/cgroup.procs";
    if (const int err = files::write(path, std::to_string(pid))) {
      fail("cgroup attach", err, fmt::format("write pid {} to {}", pid, path), advice_for(err));
    }
  }
}

std::vector<UniqueFd> open_tasks(const Group::State& state) {
  std::vector<UniqueFd> fds;
  for (const auto& dir : state.dirs) {
    const std::string path = dir.path + "/tasks";
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd.valid()) {
      const int err = errno;
      fail("cgroup attach", err, fmt::format("open {} for writing", path), advice_for(err));
    }
    fds.push_back(std::move(fd));
  }
  return fds;
}

Usage usage(const Group::State& state) {
  Usage u;
  auto read = [](const std::string& path) { return files::read(path).value_or(std::string{}); };
  if (const auto* acct = state.dir_with("cpuacct")) {
    // usage_user/usage_sys are nanoseconds (4.16+); cpuacct.stat is in USER_HZ ticks.
    const auto user_ns = files::number(read(acct->path + "/cpuacct.usage_user"));
    const auto sys_ns = files::number(read(acct->path + "/cpuacct.usage_sys"));
    if (user_ns && sys_ns) {
      u.cpu_user_ms = *user_ns / 1000000;
      u.cpu_sys_ms = *sys_ns / 1000000;
    } else {
      const std::string stat = read(acct->path + "/cpuacct.stat");
      const auto hz = static_cast<uint64_t>(::sysconf(_SC_CLK_TCK));
      const auto user = files::keyed(stat, "user");
      const auto sys = files::keyed(stat, "system");
      if (user && sys && hz > 0) {
        u.cpu_user_ms = *user * 1000 / hz;
        u.cpu_sys_ms = *sys * 1000 / hz;
      }
    }
  }
  if (const auto* mem = state.dir_with("memory")) {
    const auto peak = files::number(read(mem->path + "/memory.max_usage_in_bytes"));
    if (peak) u.peak_memory_bytes = std::max(*peak, state.polled_peak);
    // oom_kill in memory.oom_control exists since 4.13; it counts kills in this cgroup.
    const auto kills = files::keyed(read(mem->path + "/memory.oom_control"), "oom_kill");
    u.oom_killed = kills.value_or(0) > 0;
    const auto failcnt = files::number(read(mem->path + "/memory.failcnt")).value_or(0);
    const auto memsw_failcnt = files::number(read(mem->path + "/memory.memsw.failcnt")).value_or(0);
    // Recent kernels no longer count failcnt for every failed charge, so a peak at the limit
    // or an OOM kill tells as well.
    const auto limit = files::number(read(mem->path + "/memory.limit_in_bytes"));
    const bool at_limit = peak && limit && *peak >= *limit;
    u.memory_limit_hit = failcnt > 0 || memsw_failcnt > 0 || at_limit || u.oom_killed;
  }
  if (const auto* pids = state.dir_with("pids")) {
    u.pids_limit_hit = files::keyed(read(pids->path + "/pids.events"), "max").value_or(0) > 0;
  }
  return u;
}

}  // namespace jail::cgroup::v1
