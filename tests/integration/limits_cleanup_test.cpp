// Issue 4: after 200 runs of every kind — normal, killed by a signal, stopped by the caller's
// SIGTERM, timed out, OOM, setup error — nothing of jail's is left on the host: no cgroup of
// theirs in any hierarchy (v1 and the unified one), no mount, no temp entry, no process.
// Other sessions may run jail at the same time, so a leftover cgroup counts as ours only if it
// carries the pid of a jail this test started (jail-<pid>-<hex>).
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "../support/time_scale.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Mount points of every cgroup and cgroup2 filesystem this process sees.
std::vector<std::string> cgroup_mounts() {
  std::vector<std::string> mounts;
  std::ifstream mountinfo("/proc/self/mountinfo");
  for (std::string line; std::getline(mountinfo, line);) {
    std::size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream after(line.substr(dash + 3));
    std::string fstype;
    after >> fstype;
    if (fstype != "cgroup" && fstype != "cgroup2") continue;
    std::istringstream before(line.substr(0, dash));
    std::string id, parent, dev, root, mount_point;
    before >> id >> parent >> dev >> root >> mount_point;
    mounts.push_back(mount_point);
  }
  return mounts;
}

// Every directory named jail-* in the tree under `dir` (cgroups are directories only).
void find_jail_dirs(const std::string& dir, int depth, std::vector<std::string>& found) {
  if (depth > 8) return;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    if (e->d_type != DT_DIR) continue;
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::string path = dir + "/" + name;
    if (name.starts_with("jail-")) found.push_back(path);
    find_jail_dirs(path, depth + 1, found);
  }
  closedir(d);
}

std::vector<std::string> jail_cgroups_anywhere() {
  std::vector<std::string> found;
  for (const std::string& mount : cgroup_mounts()) find_jail_dirs(mount, 0, found);
  return found;
}

// The pid in a cgroup directory named jail-<pid>-<hex>, or -1.
pid_t pid_of(const std::string& path) {
  std::string name = path.substr(path.rfind('/') + 1);
  if (!name.starts_with("jail-")) return -1;
  std::size_t dash = name.find('-', 5);
  if (dash == std::string::npos) return -1;
  return static_cast<pid_t>(std::atol(name.substr(5, dash - 5).c_str()));
}

std::set<std::string> mountinfo_lines() {
  std::set<std::string> lines;
  std::ifstream mountinfo("/proc/self/mountinfo");
  for (std::string line; std::getline(mountinfo, line);) lines.insert(line);
  return lines;
}

std::set<std::string> entries(const std::string& dir, const std::string& prefix) {
  std::set<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != ".." && name.starts_with(prefix)) names.insert(name);
  }
  closedir(d);
  return names;
}

struct Kind {
  std::string name;
  std::vector<std::string> args;  // after the status file, before nothing: the whole command
  Caller caller = Caller::root;
  bool caller_sends_term = false;  // the caller SIGTERMs jail once the tool has said "up"
  int exit_code;
  std::string outcome;
};

class LimitsCleanup : public ::testing::Test {
 protected:
  TempDir cwd_;
  TempDir status_dir_;
  TempDir jail_tmpdir_;  // TMPDIR for jail: any temp entry it made would land here
};

TEST_F(LimitsCleanup, TwoHundredRunsLeaveNothingBehind) {
  // A sleep length no one else uses, to find a jailed process that outlived its jail.
  const std::string marker = "30.7" + std::to_string(getpid());
  const std::vector<std::string> cgroups = {"--memory", "64M", "--pids", "64", "--cpus", "1"};
  const std::vector<Kind> kinds = {
      {"normal", concat({cgroups, {"--", "true"}}), Caller::root, false, 0, "exited"},
      {"tool killed by a signal", concat({cgroups, {"--", "sh", "-c", "kill -TERM $$"}}),
       Caller::root, false, 128 + SIGTERM, "signaled"},
      {"timed out",
       concat({cgroups,
               {"--timeout", "100ms", "--kill-grace", "100ms", "--", "sh", "-c",
                "trap '' TERM; sleep " + marker + " & sleep " + marker}}),
       Caller::root, false, 124, "timeout"},
      {"oom",
       {"--memory", "16M", "--pids", "64", "--", probe("lim_alloc"), "0"},
       Caller::root,
       false,
       137,
       "oom"},
      {"setup error after the cgroup", concat({cgroups, {"--cwd", "/no-such-dir", "--", "true"}}),
       Caller::root, false, 125, "setup_error"},
      {"caller's SIGTERM", concat({cgroups, {"--", "sh", "-c", "echo up; exec sleep " + marker}}),
       Caller::root, true, 128 + SIGTERM, "signaled"},
      {"non-root asking for a cgroup",
       {"--memory", "64M", "--", "true"},
       Caller::unprivileged,
       false,
       125,
       "setup_error"},
  };
  // 40 each of normal, killed, timed out, OOM and setup error; "killed" and "setup error" are
  // each split between two ways of getting there.
  const std::vector<std::pair<std::size_t, int>> plan = {{0, 40}, {1, 20}, {5, 20}, {2, 40},
                                                         {3, 40}, {4, 30}, {6, 10}};
  std::vector<std::size_t> order;
  for (int round = 0; order.size() < 200; ++round) {
    for (auto [kind, count] : plan) {
      if (round < count) order.push_back(kind);
    }
  }
  ASSERT_EQ(order.size(), 200u);

  const std::set<std::string> mounts_before = mountinfo_lines();
  const std::set<std::string> tmp_before = entries("/tmp", "jail");
  const std::vector<std::string> cgroups_before = jail_cgroups_anywhere();
  ASSERT_FALSE(cgroup_mounts().empty()) << "no cgroup filesystem seen";

  std::set<pid_t> our_jails;
  std::map<std::string, int> wrong;  // kind -> runs that did not end as that kind should
  bool saw_cgroup_while_running = false;
  const std::string status = status_dir_ / "status.json";
  auto started = Clock::now();
  for (std::size_t kind_index : order) {
    const Kind& kind = kinds[kind_index];
    std::remove(status.c_str());
    RunOptions options;
    options.caller = kind.caller;
    options.cwd = cwd_.path();
    options.extra_env = {"TMPDIR=" + jail_tmpdir_.path()};
    JailProcess jail(concat({probe_mount(), {"--status-file", status}, kind.args}), options);
    our_jails.insert(jail.pid());
    if (kind.caller_sends_term) {
      if (jail.wait_for_stdout("up", 10s)) {
        if (!saw_cgroup_while_running) {
          std::string prefix = "jail-" + std::to_string(jail.pid()) + "-";
          for (const std::string& dir : jail_cgroups_anywhere()) {
            saw_cgroup_while_running =
                saw_cgroup_while_running || dir.substr(dir.rfind('/') + 1).starts_with(prefix);
          }
        }
        kill(jail.pid(), SIGTERM);
      }
    }
    RunResult r = jail.wait(20s);
    std::optional<std::string> text = read_file(status);
    json s = text ? json::parse(*text, nullptr, false) : json();
    // jail passes the caller's TERM on to the tool and reports the tool's death by it.
    bool as_expected = !r.timed_out && s.is_object() && r.exit_code == kind.exit_code &&
                       s.value("outcome", "") == kind.outcome;
    if (!as_expected && wrong[kind.name]++ == 0) {
      ADD_FAILURE() << "a \"" << kind.name << "\" run ended otherwise\n"
                    << describe(r) << "\nstatus: " << (text ? *text : "<none>");
    }
  }
  double seconds = std::chrono::duration<double>(Clock::now() - started).count();

  std::vector<std::string> ours_left;
  std::vector<std::string> others;
  for (const std::string& dir : jail_cgroups_anywhere()) {
    // A directory seen before the runs is another jail's, even if its pid was reused by ours.
    if (std::find(cgroups_before.begin(), cgroups_before.end(), dir) != cgroups_before.end()) {
      continue;
    }
    (our_jails.contains(pid_of(dir)) ? ours_left : others).push_back(dir);
  }
  std::vector<std::string> new_mounts;
  for (const std::string& line : mountinfo_lines()) {
    if (!mounts_before.contains(line)) new_mounts.push_back(line);
  }
  std::vector<std::string> new_tmp;
  for (const std::string& name : entries("/tmp", "jail")) {
    // jail-test-*: the test suites' own scratch, of tests that ctest -j runs alongside this one.
    if (!tmp_before.contains(name) && !name.starts_with("jail-test-")) new_tmp.push_back(name);
  }
  std::printf(
      "[ measured ] 200 runs in %.1f s (%zu jail pids); jail-* cgroups left: %zu of ours, "
      "%zu new of other sessions' (running now or leaked), %zu before the runs; new mounts %zu; "
      "new /tmp/jail* %zu\n",
      seconds, our_jails.size(), ours_left.size(), others.size(), cgroups_before.size(),
      new_mounts.size(), new_tmp.size());

  EXPECT_TRUE(saw_cgroup_while_running)
      << "never saw a run's cgroup while it ran: the search would not find leftovers either";
  EXPECT_EQ(our_jails.size(), 200u);
  for (const auto& [kind, count] : wrong) {
    EXPECT_EQ(count, 0) << count << " \"" << kind << "\" runs ended otherwise";
  }
  auto joined = [](const std::vector<std::string>& v) {
    std::string all;
    for (const std::string& s : v) all += "  " + s + "\n";
    return all;
  };
  EXPECT_TRUE(ours_left.empty()) << "cgroups left behind:\n" << joined(ours_left);
  EXPECT_TRUE(new_mounts.empty()) << "mounts left in the host's namespace:\n" << joined(new_mounts);
  EXPECT_TRUE(new_tmp.empty()) << "new entries in /tmp:\n" << joined(new_tmp);
  EXPECT_TRUE(entries(jail_tmpdir_.path(), "").empty()) << "entries left in jail's TMPDIR";
  EXPECT_EQ(processes_with(std::string("sleep") + '\0' + marker), 0)
      << "a jailed process outlived its jail";
  EXPECT_LT(seconds, scaled(150.0)) << "200 runs should stay well under the CI budget";
}

// jail ended by a signal from its caller — any signal it can catch — still removes its cgroup,
// and the tool goes with it. Whatever a run leaks is removed here (empty directories named for
// the jail this test started, so jail's own), to leave the host clean even when this fails.
TEST_F(LimitsCleanup, CallerSignalsLeaveNoCgroup) {
  const std::string marker = "40.7" + std::to_string(getpid());
  std::vector<std::string> leaks;
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF,
                  SIGXCPU, SIGXFSZ}) {
    RunOptions options;
    options.cwd = cwd_.path();
    JailProcess jail({"--memory", "64M", "--", "sh", "-c", "echo up; exec sleep " + marker},
                     options);
    ASSERT_TRUE(jail.wait_for_stdout("up", 10s)) << strsignal(sig);
    kill(jail.pid(), sig);
    RunResult r = jail.wait(10s);
    EXPECT_FALSE(r.timed_out) << strsignal(sig) << "\n" << describe(r);
    const std::string prefix = "jail-" + std::to_string(jail.pid()) + "-";
    std::vector<std::string> left;
    for (const std::string& dir : jail_cgroups_anywhere()) {
      if (dir.substr(dir.rfind('/') + 1).starts_with(prefix)) left.push_back(dir);
    }
    if (!left.empty()) {
      leaks.push_back(std::string(strsignal(sig)) + " (jail " +
                      (r.signal != 0 ? "killed by " + std::string(strsignal(r.signal))
                                     : "exited " + std::to_string(r.exit_code)) +
                      "): " + std::to_string(left.size()) + " cgroup directories, e.g. " +
                      left.front());
    }
    // Children first: the deepest paths sort last.
    std::sort(left.rbegin(), left.rend());
    // The tool of a jail that died is killed after it (parent-death signal): wait for each
    // directory to empty before removing it.
    for (const std::string& dir : left) {
      auto until = Clock::now() + 10s;
      for (;;) {
        std::optional<std::string> procs = read_file(dir + "/cgroup.procs");
        if (!procs || trim(*procs).empty() || Clock::now() >= until) break;
        usleep(20000);
      }
      if (rmdir(dir.c_str()) != 0) ADD_FAILURE() << "could not remove " << dir;
    }
  }
  std::string all;
  for (const std::string& leak : leaks) all += "  " + leak + "\n";
  EXPECT_TRUE(leaks.empty()) << "jail left its cgroup behind when its caller sent\n" << all;
  // The tools went with their jails.
  auto deadline = Clock::now() + scaled(5s);
  while (processes_with(std::string("sleep") + '\0' + marker) > 0 && Clock::now() < deadline) {
    usleep(50000);
  }
  EXPECT_EQ(processes_with(std::string("sleep") + '\0' + marker), 0)
      << "a tool outlived the jail its caller signalled";
}

// `kill -9 jail` leaves jail no moment to remove its cgroup; the next jail under the same parent
// removes it once it is empty and old enough, and leaves alone what a live process made.
TEST_F(LimitsCleanup, KilledJailsCgroupIsRemovedByTheNextJail) {
  RunOptions options;
  options.cwd = cwd_.path();
  std::vector<std::string> left;
  {
    JailProcess jail({"--memory", "64M", "--", "sh", "-c", "echo up; exec sleep 30"}, options);
    ASSERT_TRUE(jail.wait_for_stdout("up", 10s));
    ASSERT_EQ(kill(jail.pid(), SIGKILL), 0);
    (void)jail.wait(10s);
    for (const std::string& dir : jail_cgroups_anywhere()) {
      if (pid_of(dir) == jail.pid()) left.push_back(dir);
    }
  }
  ASSERT_FALSE(left.empty()) << "a SIGKILLed jail cannot remove its cgroup; expected one left";
  for (const std::string& dir : left) {
    const auto until = Clock::now() + 10s;  // the tool dies after its jail (the go pipe)
    for (std::optional<std::string> procs; (procs = read_file(dir + "/cgroup.procs")) &&
                                           !trim(*procs).empty() && Clock::now() < until;) {
      usleep(20000);
    }
    // As if it had been left a while ago: younger ones may be a jail that is just starting.
    const timespec old[2] = {{1577836800, 0}, {1577836800, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, dir.c_str(), old, 0), 0) << dir;
  }
  // One of a live process (this test) stays, however old.
  const std::string parent = left.front().substr(0, left.front().rfind('/'));
  const std::string alive = parent + "/jail-" + std::to_string(getpid()) + "-0123456789abcdef";
  ASSERT_EQ(mkdir(alive.c_str(), 0755), 0) << alive;
  const timespec old[2] = {{1577836800, 0}, {1577836800, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, alive.c_str(), old, 0), 0);

  const RunResult next = run_jail({"--memory", "64M", "--", "true"}, options);
  EXPECT_EQ(next.exit_code, 0) << describe(next);
  for (const std::string& dir : left) {
    EXPECT_NE(access(dir.c_str(), F_OK), 0) << dir << " left by the killed jail is still there";
    rmdir(dir.c_str());
  }
  EXPECT_EQ(access(alive.c_str(), F_OK), 0) << "a live process's cgroup must stay";
  EXPECT_EQ(rmdir(alive.c_str()), 0);
}

}  // namespace
}  // namespace jail_test
