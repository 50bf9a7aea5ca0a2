// Signals from inside: kill -9 -1 reaches only the jail's own processes; jail (the supervisor)
// is not visible and PID 1 ignores what the tool sends it.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "support.hpp"

namespace jail_security {
namespace {

class Signals : public SecurityTest {};

TEST_P(Signals, KillMinusOneOnlyKillsTheJailsProcesses) {
  // The host sleeper runs as the tool's own host uid (65534), the one kill(-1) could reach.
  pid_t sleeper = fork();
  ASSERT_GE(sleeper, 0);
  if (sleeper == 0) {
    if (setresgid(kNobodyGid, kNobodyGid, kNobodyGid) != 0) _exit(120);
    if (setresuid(kNobodyUid, kNobodyUid, kNobodyUid) != 0) _exit(120);
    execl("/bin/sleep", "sleep", "120", static_cast<char*>(nullptr));
    _exit(121);
  }
  Outcome o = jail({}, {sec_probe("sec_sig"), "killall"});
  int status = 0;
  const bool host_alive = waitpid(sleeper, &status, WNOHANG) == 0;
  kill(sleeper, SIGKILL);
  waitpid(sleeper, nullptr, 0);
  const bool contained = host_alive && o.run.exit_code == 0 && o.value("own_child") == "killed" &&
                         o.value("self") == "alive" && o.value("kill_minus_one") == "OK";
  row("kill_-9_-1", "own child killed; host process of the same uid alive; exit 0",
      std::string("host=") + (host_alive ? "alive" : "KILLED") + " child=" + o.value("own_child") +
          " exit=" + std::to_string(o.run.exit_code),
      contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(Signals, SupervisorIsInvisibleAndInitIgnoresKills) {
  TempDir shared;
  const std::string pid_file = shared / "jail.pid";
  auto p = start({"--ro-bind", shared.path() + ":/shared"},
                 {sec_probe("sec_sig"), "supervisor", "/shared/jail.pid"});
  {
    std::ofstream f(pid_file + ".tmp");
    f << p->pid() << "\n";
  }
  ASSERT_EQ(rename((pid_file + ".tmp").c_str(), pid_file.c_str()), 0);
  Outcome o = finish(*p);
  const bool jail_survived = o.run.signal == 0 && !o.run.timed_out;
  // gVisor has no pidfd_open (ENOSYS); its tool may be PID 1 itself (is_init=yes).
  const bool contained = jail_survived && o.run.exit_code == 0 && o.value("self") == "alive" &&
                         o.value("kill0_host_pid") == "ESRCH" &&
                         (o.value("pidfd_open_host_pid") == "ESRCH" ||
                          (runsc() && o.value("pidfd_open_host_pid") == "ENOSYS")) &&
                         o.outcome() == "exited";
  row("signal_supervisor", "jail's pid ESRCH inside; PID 1 ignores SIGKILL; exit 0",
      "kill0=" + o.value("kill0_host_pid") + " pidfd=" + o.value("pidfd_open_host_pid") +
          " init=" + o.value("kill_init_sigkill") + " exit=" + std::to_string(o.run.exit_code),
      contained);
  EXPECT_TRUE(contained) << o.describe();
}

JAIL_SECURITY_INSTANTIATE(Signals);

}  // namespace
}  // namespace jail_security
