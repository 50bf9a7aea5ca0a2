// Issue 4, the cgroup limits through the real binary on this host's v1 (hybrid) hierarchies:
// the kernel holds what was asked, a fork bomb stays under --pids, a memory bomb ends as `oom`,
// --cpus 0.5 gives about half a core, and a caller who may not create cgroups is told what to do.
// A destructive probe runs only after the same test has shown its limit holding on a harmless one.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "../support/time_scale.hpp"
#include "../support/wait_until.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr long long kMiB = 1024 * 1024;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double number(const json& s, const char* key) {
  if (!s.is_object() || !s.contains(key) || !s[key].is_number()) return -1;
  return s[key].get<double>();
}

std::string text(const json& s, const char* key) {
  if (!s.is_object() || !s.contains(key) || !s[key].is_string()) return "<not a string>";
  return s[key].get<std::string>();
}

// "key value" lines of a probe's output, as a map.
std::map<std::string, std::string> fields(const std::string& out) {
  std::map<std::string, std::string> result;
  for (const std::string& line : split_lines(out)) {
    std::size_t space = line.find(' ');
    if (space != std::string::npos) result[line.substr(0, space)] = line.substr(space + 1);
  }
  return result;
}

long field_long(const std::map<std::string, std::string>& f, const std::string& key) {
  auto it = f.find(key);
  return it == f.end() ? -1 : std::atol(it->second.c_str());
}

// The caller's directory in the v1 hierarchy that holds `controller`: the hierarchy's mount
// point (from /proc/self/mountinfo) joined with this process's line of /proc/self/cgroup.
std::string caller_v1_dir(const std::string& controller) {
  std::string mount_point;
  std::ifstream mountinfo("/proc/self/mountinfo");
  for (std::string line; std::getline(mountinfo, line);) {
    std::size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream after(line.substr(dash + 3));
    std::string fstype, source, options;
    after >> fstype >> source >> options;
    if (fstype != "cgroup") continue;
    std::istringstream opts(options);
    bool has = false;
    for (std::string o; std::getline(opts, o, ',');) has = has || o == controller;
    if (!has) continue;
    std::istringstream before(line.substr(0, dash));
    std::string id, parent, dev, root;
    before >> id >> parent >> dev >> root >> mount_point;
    break;
  }
  if (mount_point.empty()) return {};
  std::ifstream cgroup("/proc/self/cgroup");
  for (std::string line; std::getline(cgroup, line);) {
    std::size_t a = line.find(':');
    std::size_t b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::istringstream controllers(line.substr(a + 1, b - a - 1));
    for (std::string c; std::getline(controllers, c, ',');) {
      if (c == controller) {
        std::string path = line.substr(b + 1);
        return path == "/" ? mount_point : mount_point + path;
      }
    }
  }
  return {};
}

// The jail's own cgroup directory in `controller`'s hierarchy: jail-<jail's pid>-<hex>.
std::string jail_cgroup_dir(const std::string& controller, pid_t jail_pid) {
  std::string parent = caller_v1_dir(controller);
  if (parent.empty()) return {};
  std::string prefix = "jail-" + std::to_string(jail_pid) + "-";
  DIR* dir = opendir(parent.c_str());
  if (dir == nullptr) return {};
  std::string found;
  while (dirent* e = readdir(dir)) {
    if (std::string(e->d_name).starts_with(prefix)) found = parent + "/" + e->d_name;
  }
  closedir(dir);
  return found;
}

std::string read_trimmed(const std::string& path) {
  std::optional<std::string> content = read_file(path);
  return content ? trim(*content) : "<unreadable " + path + ">";
}

// Polls until jail's cgroup in `controller` holds `processes` processes (jail's init, then the
// tool it forks) or 10 s pass.
std::string wait_for_jail_cgroup(const std::string& controller, pid_t jail_pid,
                                 std::size_t processes = 1) {
  auto deadline = Clock::now() + scaled(std::chrono::seconds(10));
  while (Clock::now() < deadline) {
    std::string dir = jail_cgroup_dir(controller, jail_pid);
    if (!dir.empty() && split_lines(read_trimmed(dir + "/cgroup.procs")).size() >= processes) {
      return dir;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return {};
}

// Root caller: cgroup limits need a caller that may create cgroups (no delegation here).
class LimitsCgroup : public ::testing::Test {
 protected:
  struct Run {
    RunResult result;
    json status;
    double seconds = 0;  // measured by the test, jail's start to its exit
  };

  std::string status_path() const { return status_dir_ / "status.json"; }

  json read_status() const {
    std::optional<std::string> content = read_file(status_path());
    if (!content) return json();
    json parsed = json::parse(*content, nullptr, false);
    return parsed.is_discarded() ? json() : parsed;
  }

  Run run_status(const std::vector<std::string>& args, Caller who = Caller::root) {
    Run r;
    std::remove(status_path().c_str());
    RunOptions options;
    options.caller = who;
    options.cwd = cwd_.path();
    auto start = Clock::now();
    r.result = run_jail(concat({probe_mount(), {"--status-file", status_path()}, args}), options);
    r.seconds = seconds_since(start);
    r.status = read_status();
    return r;
  }

  std::unique_ptr<JailProcess> start(const std::vector<std::string>& args) {
    std::remove(status_path().c_str());
    RunOptions options;
    options.cwd = cwd_.path();
    return std::make_unique<JailProcess>(
        concat({probe_mount(), {"--status-file", status_path()}, args}), options);
  }

  // The harmless proof that --pids 64 holds: a probe that stops at its first failed fork.
  void expect_pids_64_hold() {
    Run r = run_status({"--pids", "64", "--", probe("lim_forks"), "100"});
    auto f = fields(r.result.out);
    long forked = field_long(f, "forked");
    std::printf("[ measured ] --pids 64: the probe forked %ld children before %s\n", forked,
                f["errno"].c_str());
    ASSERT_EQ(r.result.exit_code, 0) << describe(r.result);
    // jail's init and the probe count too: 64 in all, so at most 62 children.
    EXPECT_LE(forked, 62) << describe(r.result);
    EXPECT_GE(forked, 56) << "the limit is far tighter than asked\n" << describe(r.result);
    ASSERT_EQ(f["errno"], "EAGAIN") << describe(r.result);
    EXPECT_EQ(text(r.status, "outcome"), "exited") << r.status.dump();
    EXPECT_EQ(text(r.status, "limit_hit"), "pids") << r.status.dump();
  }

  TempDir cwd_;
  TempDir status_dir_;
};

TEST_F(LimitsCgroup, KernelHoldsTheLimitsAsAsked) {
  auto jail = start({"--memory", "64M", "--pids", "64", "--cpus", "0.5", "--", "sleep", "30"});
  std::string memory = wait_for_jail_cgroup("memory", jail->pid(), 2);
  ASSERT_FALSE(memory.empty()) << "no jail-" << jail->pid() << "-* under "
                               << caller_v1_dir("memory");
  std::string pids = jail_cgroup_dir("pids", jail->pid());
  std::string cpu = jail_cgroup_dir("cpu", jail->pid());
  ASSERT_FALSE(pids.empty());
  ASSERT_FALSE(cpu.empty());
  EXPECT_EQ(read_trimmed(memory + "/memory.limit_in_bytes"), std::to_string(64 * kMiB));
  // Swap off for the jail: memory+swap capped at the same figure where the kernel accounts
  // swap, swappiness 0 where it does not.
  if (access((memory + "/memory.memsw.limit_in_bytes").c_str(), F_OK) == 0) {
    EXPECT_EQ(read_trimmed(memory + "/memory.memsw.limit_in_bytes"), std::to_string(64 * kMiB));
  } else {
    EXPECT_EQ(read_trimmed(memory + "/memory.swappiness"), "0");
  }
  EXPECT_EQ(read_trimmed(pids + "/pids.max"), "64");
  long quota = std::atol(read_trimmed(cpu + "/cpu.cfs_quota_us").c_str());
  long period = std::atol(read_trimmed(cpu + "/cpu.cfs_period_us").c_str());
  ASSERT_GT(period, 0);
  EXPECT_DOUBLE_EQ(static_cast<double>(quota) / static_cast<double>(period), 0.5);
  // The jail's processes (its init and the tool) are inside, in every controller.
  for (const std::string& dir : {memory, pids, cpu}) {
    auto procs = split_lines(read_trimmed(dir + "/cgroup.procs"));
    EXPECT_GE(procs.size(), 2u) << dir;
  }
  kill(jail->pid(), SIGTERM);
  RunResult r = jail->wait(10s);
  EXPECT_FALSE(r.timed_out) << describe(r);
  EXPECT_EQ(access(memory.c_str(), F_OK), -1) << memory << " left behind";
}

TEST_F(LimitsCgroup, PidsLimitStopsTheSixtyFifthProcess) {
  expect_pids_64_hold();
}

TEST_F(LimitsCgroup, ForkBombIsContained) {
  ASSERT_NO_FATAL_FAILURE(expect_pids_64_hold());

  auto started = Clock::now();
  auto jail = start({"--pids", "64", "--timeout", "20s", "--", probe("lim_forkbomb"), "3"});
  std::string pids = wait_for_jail_cgroup("pids", jail->pid());
  ASSERT_FALSE(pids.empty()) << "no jail cgroup for pid " << jail->pid();
  // The bomb is at its limit: it has grown, and the kernel has refused it a fork.
  const auto refused = [&] {
    const auto events = fields(read_trimmed(pids + "/pids.events"));
    return field_long(events, "max") > 0;
  };
  const auto grown = [&] { return std::atol(read_trimmed(pids + "/pids.current").c_str()) >= 32; };
  EXPECT_TRUE(wait_until([&] { return refused() && grown(); }, 10s))
      << "the bomb never reached its limit: " << read_trimmed(pids + "/pids.events");
  long current = std::atol(read_trimmed(pids + "/pids.current").c_str());
  EXPECT_LE(current, 64) << "pids.current in " << pids;
  EXPECT_GE(current, 32) << "the bomb did not go off";
  // The host is unaffected: this process can still fork while the bomb is at its limit.
  pid_t child = fork();
  ASSERT_GE(child, 0) << "the test process cannot fork during the bomb";
  if (child == 0) _exit(7);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7);

  RunResult r = jail->wait(30s);
  double seconds = seconds_since(started);
  json s = read_status();
  std::printf(
      "[ measured ] fork bomb: pids.current %ld at its height, jail back after %.2f s, %s\n",
      current, seconds, trim(r.out).c_str());
  EXPECT_FALSE(r.timed_out) << describe(r);
  EXPECT_LT(seconds, scaled(15.0)) << "the bomb ends itself after 3 s";
  // Either the limit is named, or the tool's own failure is the outcome.
  EXPECT_TRUE(text(s, "limit_hit") == "pids" ||
              (text(s, "outcome") == "exited" && number(s, "exit_code") != 0))
      << s.dump();
  EXPECT_EQ(text(s, "limit_hit"), "pids") << s.dump();
  EXPECT_NE(r.err.find("reached its limit of 64 processes and threads (--pids)"), std::string::npos)
      << describe(r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("bomb failures"), std::string::npos) << describe(r);
}

TEST_F(LimitsCgroup, MemoryBombEndsAsOom) {
  // Harmless first: a bounded 96 MiB allocation must not get past 64M.
  Run bounded = run_status({"--memory", "64M", "--", probe("lim_alloc"), "96"});
  ASSERT_EQ(bounded.result.exit_code, 137) << describe(bounded.result);
  ASSERT_EQ(text(bounded.status, "outcome"), "oom") << bounded.status.dump();
  ASSERT_EQ(bounded.result.out.find("done"), std::string::npos) << describe(bounded.result);

  Run bomb = run_status({"--memory", "64M", "--timeout", "30s", "--", probe("lim_alloc"), "0"});
  const json& s = bomb.status;
  double peak = number(s, "peak_memory_bytes");
  std::printf("[ measured ] memory bomb under 64M: peak_memory_bytes %.0f (%.1f MiB), %.2f s\n",
              peak, peak / kMiB, bomb.seconds);
  EXPECT_EQ(bomb.result.exit_code, 137) << describe(bomb.result);
  EXPECT_EQ(text(s, "outcome"), "oom") << s.dump();
  EXPECT_EQ(text(s, "limit_hit"), "memory") << s.dump();
  EXPECT_TRUE(s["exit_code"].is_null()) << s.dump();
  EXPECT_EQ(number(s, "jail_exit_code"), 137) << s.dump();
  EXPECT_LE(peak, 64.0 * kMiB + 4.0 * kMiB) << s.dump();
  EXPECT_GE(peak, 32.0 * kMiB) << "the bomb never came near the limit: " << s.dump();
  EXPECT_EQ(number(s["limits"], "memory_bytes"), 64.0 * kMiB) << s.dump();
  // 137 is any SIGKILL: jail says it was the memory limit.
  EXPECT_NE(bomb.result.err.find("OOM killer: the jail reached its memory limit of 64.0 MiB "
                                 "(--memory)"),
            std::string::npos)
      << describe(bomb.result);
}

TEST_F(LimitsCgroup, BelowTheMemoryLimitRunsToTheEnd) {
  Run r = run_status({"--memory", "64M", "--", probe("lim_alloc"), "32"});
  EXPECT_EQ(r.result.exit_code, 0) << describe(r.result);
  EXPECT_NE(r.result.out.find("done 32"), std::string::npos) << describe(r.result);
  EXPECT_EQ(text(r.status, "outcome"), "exited") << r.status.dump();
  EXPECT_TRUE(r.status["limit_hit"].is_null()) << r.status.dump();
  EXPECT_GE(number(r.status, "peak_memory_bytes"), 32.0 * kMiB) << r.status.dump();
}

// cpu used / wall time of one finished run.
double cpu_ratio(const json& s) {
  double wall = number(s, "wall_ms");
  if (wall <= 0) return -1;
  return (number(s, "cpu_user_ms") + number(s, "cpu_sys_ms")) / wall;
}

TEST_F(LimitsCgroup, HalfACpuIsAboutHalfACore) {
  // Two spinning processes would take two cores; the quota is for the whole jail. An unlimited
  // twin runs at the same time, so both face the same load from the rest of the machine: on a
  // busy 2-core host one jail may get less than half a core even without any quota.
  TempDir twin_status;
  RunOptions twin_options;
  twin_options.cwd = cwd_.path();
  JailProcess twin(concat({probe_mount(),
                           {"--status-file", twin_status / "status.json", "--pids", "16", "--",
                            probe("lim_spin"), "3", "2"}}),
                   twin_options);
  auto limited = start({"--cpus", "0.5", "--", probe("lim_spin"), "3", "2"});
  std::string cpu = wait_for_jail_cgroup("cpu", limited->pid());
  RunResult r = limited->wait(30s);
  RunResult t = twin.wait(30s);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  ASSERT_EQ(t.exit_code, 0) << describe(t);
  json s = read_status();
  std::optional<std::string> twin_text = read_file(twin_status / "status.json");
  json twin_s = twin_text ? json::parse(*twin_text, nullptr, false) : json();
  double ratio = cpu_ratio(s);
  double free_ratio = cpu_ratio(twin_s);
  std::printf(
      "[ measured ] --cpus 0.5: %.3f of a core (cpu %.0f ms / wall %.0f ms); the "
      "unlimited twin got %.3f\n",
      ratio, number(s, "cpu_user_ms") + number(s, "cpu_sys_ms"), number(s, "wall_ms"), free_ratio);
  EXPECT_EQ(number(s["limits"], "cpus"), 0.5) << s.dump();
  EXPECT_GE(number(s, "wall_ms"), 2900) << s.dump();
  // The limit holds whatever the load.
  EXPECT_LE(ratio, 0.65) << s.dump();
  // And it is about half a core: 0.35 or more when the machine can give that much; on a host
  // too busy for it, at least 70% of what it could give (what the twin got, capped at 0.5).
  double can_give = std::min(0.5, free_ratio);
  EXPECT_GE(ratio, std::min(0.35, 0.7 * can_give))
      << "limited " << s.dump() << "\ntwin " << twin_s.dump();
  EXPECT_FALSE(cpu.empty());
}

TEST_F(LimitsCgroup, UnprivilegedCallerIsToldHowToGetCgroups) {
  for (const std::vector<std::string>& limit :
       {std::vector<std::string>{"--memory", "64M"}, {"--pids", "10"}, {"--cpus", "0.5"}}) {
    Run r = run_status(concat({limit, {"--", "sh", "-c", "echo ran"}}), Caller::unprivileged);
    EXPECT_EQ(r.result.exit_code, 125) << limit[0] << "\n" << describe(r.result);
    EXPECT_NE(r.result.err.find("systemd-run --user --scope -p Delegate=yes"), std::string::npos)
        << limit[0] << "\n"
        << describe(r.result);
    EXPECT_EQ(r.result.out.find("ran"), std::string::npos) << "the tool ran without its limit";
    EXPECT_EQ(text(r.status, "outcome"), "setup_error") << r.status.dump();
  }
  Run plain = run_status({"--", "sh", "-c", "echo ran"}, Caller::unprivileged);
  EXPECT_EQ(plain.result.exit_code, 0) << describe(plain.result);
  EXPECT_EQ(trim(plain.result.out), "ran") << describe(plain.result);
  EXPECT_EQ(text(plain.status, "outcome"), "exited") << plain.status.dump();
}

}  // namespace
}  // namespace jail_test
