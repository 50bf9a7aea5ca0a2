// cgroup v2: one leaf under the caller's cgroup (or --cgroup-parent).
//
// The child is born inside the leaf through clone3(CLONE_INTO_CGROUP, v2_fd()), so it never
// runs a single instruction outside its limits; cgroup.kill ends everything in one write.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "log.hpp"

#include "files.hpp"
#include "state.hpp"

namespace jail::cgroup::v2 {

namespace {

constexpr uint64_t kCfsPeriodUs = 100000;
constexpr uint64_t kCfsMinQuotaUs = 1000;

void write_limit(const std::string& dir, const std::string& file, const std::string& value,
                 const std::string& step) {
  const std::string path = dir + "/" + file;
  if (const int err = files::write(path, value)) {
    fail(step, err, fmt::format("write {} to {}", value, path), advice_for(err));
  }
}

bool contains(const std::vector<std::string>& list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

// The cgroup path of `name` under `parent_path`, as /proc/<pid>/cgroup writes it.
std::string child_path(const std::string& parent_path, const std::string& name) {
  return parent_path == "/" ? "/" + name : parent_path + "/" + name;
}

}  // namespace

void setup(Group::State& state, const Limits& limits,
           const std::optional<std::string>& parent_override, const Hierarchy& h) {
  state.version = 2;
  std::string parent_path = parent_override.value_or(h.own_path);
  std::string parent = h.dir_of(parent_path);
  if (const auto home = parent_override ? std::nullopt : subtree::home_of(parent)) {
    // /proc/self/cgroup shows jail's supervisor leaf while an earlier group is alive.
    parent = *home;
    const size_t cut = parent_path.rfind('/');
    parent_path.resize(cut == std::string::npos || cut == 0 ? 1 : cut);  // "/x" -> "/"
  }
  // A parent named by the caller is asked for, as a limit is.
  const bool cgroup_required = limits.any() || parent_override.has_value();
  if (parent.empty()) {
    if (!cgroup_required) return;
    fail("cgroup parent", ENOENT,
         fmt::format("place a cgroup under {} in the hierarchy at {}", parent_path, h.mount_point),
         "that cgroup is outside what this mount shows (a cgroup namespace or bind mount)");
  }

  std::vector<std::string> required;
  if (limits.memory_bytes) required.emplace_back("memory");
  if (limits.pids) required.emplace_back("pids");
  if (limits.cpus) required.emplace_back("cpu");
  const auto available =
      files::words(files::read(parent + "/cgroup.controllers").value_or(std::string{}));
  for (const auto& c : required) {
    if (!contains(available, c)) {
      fail(fmt::format("cgroup {}", c), ENOTSUP,
           fmt::format("use the {} controller: {}/cgroup.controllers offers [{}]", c, parent,
                       fmt::join(available, " ")),
           "the controller is not delegated to this cgroup; run under "
           "`systemd-run --user --scope -p Delegate=yes jail ...`, or as root, or pass "
           "--cgroup-parent with a cgroup that has it");
    }
  }
  // cpu.stat's usage fields exist without the cpu controller, so accounting needs only memory.
  std::vector<std::string> optional;
  if (!limits.memory_bytes && contains(available, "memory")) optional.emplace_back("memory");

  std::vector<std::string> enabled;
  if (!required.empty() || !optional.empty()) {
    state.v2_parent = parent;  // set first: prepare() holds a reference even when it throws
    enabled = subtree::prepare(parent, required, optional);
  }

  const std::string name = files::unique_name();
  const std::string leaf = parent + "/" + name;
  files::remove_stale_jails(parent);
  if (::mkdir(leaf.c_str(), 0755) != 0) {
    const int err = errno;
    if (cgroup_required)
      fail("cgroup create", err, fmt::format("create {}", leaf), advice_for(err));
    jail::log().debug("cgroup: no accounting: cannot create {}: {}", leaf, files::errno_text(err));
    return;
  }
  state.dirs.push_back({leaf, enabled});
  state.v2_cgroup = child_path(parent_path, name);
  state.v2_fd = ::open(leaf.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (state.v2_fd < 0) {
    const int err = errno;
    fail("cgroup open", err, fmt::format("open {}", leaf), advice_for(err));
  }

  if (limits.memory_bytes) {
    write_limit(leaf, "memory.max", std::to_string(*limits.memory_bytes), "cgroup memory limit");
    if (files::exists(leaf + "/memory.swap.max")) {
      write_limit(leaf, "memory.swap.max", "0", "cgroup swap limit");
    } else {
      // No swap accounting in this kernel (swapaccount=0 or no CONFIG_MEMCG_SWAP); memory.max
      // still bounds RAM, but pages swapped out escape it.
      jail::log().warn("cgroup: {}/memory.swap.max is missing: the jail's swap use is not limited",
                       leaf);
    }
    // One OOM kill takes the whole jail: a half-killed tool tree (the reaper alive, the worker
    // gone) would only confuse the result.
    if (files::exists(leaf + "/memory.oom.group")) {
      write_limit(leaf, "memory.oom.group", "1", "cgroup memory oom group");
    }
  }
  if (limits.pids) {
    write_limit(leaf, "pids.max", std::to_string(*limits.pids), "cgroup pids limit");
  }
  if (limits.cpus) {
    const auto quota = std::max<uint64_t>(
        kCfsMinQuotaUs,
        static_cast<uint64_t>(std::ceil(*limits.cpus * static_cast<double>(kCfsPeriodUs))));
    write_limit(leaf, "cpu.max", fmt::format("{} {}", quota, kCfsPeriodUs), "cgroup cpu quota");
  }
}

void attach(const Group::State& state, pid_t pid) {
  if (state.dirs.empty()) return;
  // Already there when clone3 put it there; writing again would need write access to the
  // common ancestor's cgroup.procs, which a delegated (non-root) caller may lack.
  const auto self = files::read(fmt::format("/proc/{}/cgroup", pid));
  if (self) {
    for (size_t at = 0; at < self->size();) {
      const size_t eol = std::min(self->find('\n', at), self->size());
      const std::string_view line(self->data() + at, eol - at);
      if (line.starts_with("0::") && line.substr(3) == state.v2_cgroup) return;
      at = eol + 1;
    }
  }
  const std::string path = state.dirs.front().path + "/cgroup.procs";
  if (const int err = files::write(path, std::to_string(pid))) {
    fail("cgroup attach", err, fmt::format("write pid {} to {}", pid, path), advice_for(err));
  }
}

Usage usage(const Group::State& state) {
  Usage u;
  if (state.dirs.empty()) return u;
  const std::string& dir = state.dirs.front().path;
  auto read = [&](const char* file) { return files::read(dir + "/" + file).value_or(""); };
  const std::string cpu = read("cpu.stat");
  const auto user = files::keyed(cpu, "user_usec");
  const auto sys = files::keyed(cpu, "system_usec");
  if (user && sys) {
    u.cpu_user_ms = *user / 1000;
    u.cpu_sys_ms = *sys / 1000;
  }
  // memory.peak arrived in 5.19; before it, the largest memory.current anyone sampled.
  if (const auto peak = files::number(read("memory.peak"))) {
    u.peak_memory_bytes = *peak;
  } else if (const auto current = files::number(read("memory.current"))) {
    u.peak_memory_bytes = std::max(*current, state.polled_peak);
  }
  const std::string events = read("memory.events");
  u.oom_killed = files::keyed(events, "oom_kill").value_or(0) > 0;
  u.memory_limit_hit = files::keyed(events, "max").value_or(0) > 0 || u.oom_killed;
  u.pids_limit_hit = files::keyed(read("pids.events"), "max").value_or(0) > 0;
  return u;
}

bool kill(const Group::State& state) noexcept {
  for (const auto& d : state.dirs) {
    const int err = files::write(d.path + "/cgroup.kill", "1");
    if (err == ENOENT) return false;  // before 5.14
    if (err != 0) {
      jail::log().error("cgroup: cannot write 1 to {}/cgroup.kill: {}", d.path,
                        files::errno_text(err));
      return false;
    }
  }
  return true;
}

bool populated(const Group::State& state) noexcept {
  for (const auto& d : state.dirs) {
    const auto events = files::read(d.path + "/cgroup.events");
    if (!events) continue;  // gone already
    if (files::keyed(*events, "populated").value_or(1) != 0) return true;
  }
  return false;
}

}  // namespace jail::cgroup::v2
