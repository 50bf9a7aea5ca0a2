// Signals sent to jail reach the tool; SIGKILL of jail takes the whole jailed tree with it.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>

#include "../support/time_scale.hpp"
#include "../support/wait_until.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

class Signals : public CallerTest {};

struct HostProcess {
  pid_t pid;
  std::string start_time;  // field 22 of /proc/<pid>/stat: tells a reused pid apart
};

// State letter, parent and start time of a host pid, or false if it has gone.
bool read_stat(pid_t pid, char& state, pid_t& ppid, std::string& start_time) {
  std::optional<std::string> stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  std::size_t paren = stat->rfind(')');
  if (paren == std::string::npos) return false;
  std::istringstream fields(stat->substr(paren + 1));
  std::string field;
  std::vector<std::string> rest;
  while (fields >> field) rest.push_back(field);
  if (rest.size() < 20) return false;
  state = rest[0][0];
  ppid = static_cast<pid_t>(std::stol(rest[1]));
  start_time = rest[19];
  return true;
}

// Every live descendant of `root` on the host.
std::vector<HostProcess> descendants(pid_t root) {
  std::map<pid_t, std::vector<HostProcess>> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    char state = 0;
    pid_t ppid = 0;
    std::string start;
    pid_t pid = static_cast<pid_t>(std::stol(name));
    if (read_stat(pid, state, ppid, start) && state != 'Z' && state != 'X') {
      children[ppid].push_back({pid, start});
    }
  }
  std::vector<HostProcess> found;
  std::vector<pid_t> todo = {root};
  while (!todo.empty()) {
    pid_t p = todo.back();
    todo.pop_back();
    for (const HostProcess& c : children[p]) {
      found.push_back(c);
      todo.push_back(c.pid);
    }
  }
  return found;
}

bool still_alive(const HostProcess& p) {
  char state = 0;
  pid_t ppid = 0;
  std::string start;
  if (!read_stat(p.pid, state, ppid, start)) return false;
  return start == p.start_time && state != 'Z' && state != 'X';
}

// How many of `processes` have exec'd `sleep 60` (a forked shell still shows the shell's argv).
int sleeping(const std::vector<HostProcess>& processes) {
  int count = 0;
  for (const HostProcess& p : processes) {
    const std::string sleep_60 = std::string("sleep") + '\0' + "60" + '\0';
    if (read_file("/proc/" + std::to_string(p.pid) + "/cmdline") == sleep_60) ++count;
  }
  return count;
}

const char* const kReady = "ready-for-signal";

TEST_P(Signals, SigtermReachesATrappingTool) {
  auto jail = start({"--", "sh", "-c",
                     "trap 'echo got-TERM; exit 7' TERM; echo " + std::string(kReady) +
                         "; while :; do sleep 0.1; done"});
  ASSERT_TRUE(jail->wait_for_stdout(kReady, 20s)) << describe(jail->wait(1s));
  ASSERT_EQ(kill(jail->pid(), SIGTERM), 0);
  RunResult r = jail->wait(10s);
  EXPECT_EQ(r.exit_code, 7) << describe(r);
  EXPECT_NE(r.out.find("got-TERM"), std::string::npos) << describe(r);
}

TEST_P(Signals, ForwardedSignalsKillTheTool) {
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) {
    SCOPED_TRACE("signal " + std::to_string(sig));
    auto jail = start({"--", "sh", "-c", "echo " + std::string(kReady) + "; exec sleep 30"});
    ASSERT_TRUE(jail->wait_for_stdout(kReady, 20s)) << describe(jail->wait(1s));
    ASSERT_EQ(kill(jail->pid(), sig), 0);
    RunResult r = jail->wait(10s);
    EXPECT_EQ(r.exit_code, 128 + sig) << describe(r);
    EXPECT_EQ(r.signal, 0) << "jail itself must not die of the signal\n" << describe(r);
  }
}

TEST_P(Signals, EachForwardedSignalArrivesAsItself) {
  // The tool traps every forwardable signal and names what it got.
  std::string script =
      "for s in INT HUP QUIT USR1 USR2; do trap \"echo got-$s\" $s; done;"
      " trap 'echo got-TERM; exit 0' TERM; echo " +
      std::string(kReady) + "; while :; do sleep 0.1; done";
  auto jail = start({"--", "sh", "-c", script});
  ASSERT_TRUE(jail->wait_for_stdout(kReady, 20s)) << describe(jail->wait(1s));
  for (auto [sig, name] :
       {std::pair{SIGINT, "INT"}, std::pair{SIGHUP, "HUP"}, std::pair{SIGQUIT, "QUIT"},
        std::pair{SIGUSR1, "USR1"}, std::pair{SIGUSR2, "USR2"}}) {
    ASSERT_EQ(kill(jail->pid(), sig), 0);
    EXPECT_TRUE(jail->wait_for_stdout(std::string("got-") + name, 5s)) << name;
  }
  ASSERT_EQ(kill(jail->pid(), SIGTERM), 0);
  RunResult r = jail->wait(10s);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("got-TERM"), std::string::npos) << describe(r);
}

TEST_P(Signals, SigkillOfJailLeavesNoJailedProcess) {
  auto jail =
      start({"--", "sh", "-c",
             "sleep 60 & sleep 60 & (sleep 60 &) ; echo " + std::string(kReady) + "; wait"});
  ASSERT_TRUE(jail->wait_for_stdout(kReady, 20s)) << describe(jail->wait(1s));
  // The background sleeps have exec'd: the host sees all three.
  std::vector<HostProcess> jailed;
  const bool all_three = wait_until(
      [&] {
        jailed = descendants(jail->pid());
        return sleeping(jailed) >= 3;
      },
      10s);
  // Whatever happens below, no process of this test outlives it.
  struct Reaper {
    const std::vector<HostProcess>& processes;
    ~Reaper() {
      for (const HostProcess& p : processes) {
        if (still_alive(p)) kill(p.pid, SIGKILL);
      }
    }
  } reaper{jailed};
  // At least the shell and its three sleeps (plus the reaper).
  ASSERT_GE(jailed.size(), 4u) << "could not find the jailed processes from the host";
  ASSERT_TRUE(all_three) << "the three background sleeps never ran";

  ASSERT_EQ(kill(jail->pid(), SIGKILL), 0);
  auto killed_at = std::chrono::steady_clock::now();
  std::vector<HostProcess> alive = jailed;
  while (!alive.empty() && std::chrono::steady_clock::now() - killed_at < scaled(1s)) {
    std::erase_if(alive, [](const HostProcess& p) { return !still_alive(p); });
    std::this_thread::sleep_for(20ms);
  }
  std::erase_if(alive, [](const HostProcess& p) { return !still_alive(p); });
  std::string survivors;
  for (const HostProcess& p : alive) survivors += " " + std::to_string(p.pid);
  EXPECT_TRUE(alive.empty()) << "still alive 1 s after SIGKILL of jail:" << survivors;
  RunResult r = jail->wait(5s);
  EXPECT_EQ(r.signal, SIGKILL) << describe(r);
  EXPECT_EQ(remove_cgroups_left_by(jail->pid()), std::vector<std::string>{});
}

TEST_P(Signals, JailExitsWhenTheToolDoesEvenWithBackgroundChildren) {
  // The tool's exit ends the run; processes it left behind do not keep jail waiting.
  auto begin = std::chrono::steady_clock::now();
  RunResult r = run({"--", "sh", "-c", "sleep 30 & exit 4"}, {.timeout = 25s});
  EXPECT_EQ(r.exit_code, 4) << describe(r);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, scaled(20s)) << describe(r);
}

JAIL_INSTANTIATE_FOR_CALLERS(Signals);

}  // namespace
}  // namespace jail_test
