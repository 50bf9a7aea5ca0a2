// Per-user kernel quotas are counted in every user namespace up to the host's, charged to the
// jail's owner: a tool that opened inotify instances until refused left its caller — host root,
// or the calling user — none while it ran. The jail's namespace now allows a quarter of the
// host's limit, so the caller's own inotify_init1 still succeeds while a jail holds all it can.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../support/shell_quote.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

using namespace std::chrono_literals;

class Quotas : public CallerTest {};

TEST_P(Quotas, TheCallerKeepsInotifyWhileAJailHoldsAllItCan) {
  unsigned host_limit = 0;
  std::ifstream("/proc/sys/user/max_inotify_instances") >> host_limit;
  ASSERT_GT(host_limit, 0u);
  const std::string status = cwd_ / "status.json";
  auto jail = start(
      concat({probe_mount(), {"--no-cwd", "--status-file", status, "--", probe("quota_inotify")}}));
  ASSERT_TRUE(jail->wait_for_stdout("READY", 20s));
  // The caller, as itself, while the jail holds every instance it could get.
  const std::string caller_try =
      as_root() ? ""
                : shell_output(
                      "setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c "
                      "'import ctypes; l = ctypes.CDLL(None); print(\"caller\", "
                      "l.inotify_init1(0) >= 0)'");
  int own = -1;
  if (as_root()) own = ::inotify_init1(IN_CLOEXEC);
  ::kill(jail->pid(), SIGTERM);
  const RunResult r = jail->wait(20s);
  if (own >= 0) ::close(own);
  const std::size_t at = r.out.find("held ");
  ASSERT_NE(at, std::string::npos) << describe(r);
  const unsigned held = static_cast<unsigned>(std::stoul(r.out.substr(at + 5)));
  std::printf("[ measured ] host limit %u instances per user; the jail held %u\n", host_limit,
              held);
  EXPECT_NE(r.out.find("(EMFILE)"), std::string::npos) << describe(r);
  EXPECT_LE(held, host_limit / 4) << describe(r);
  // The status names the limit the tool met, with its value.
  const auto json = nlohmann::json::parse(read_file(status).value_or("{}"));
  EXPECT_EQ(json["quotas"].value("max_inotify_instances", 0u), host_limit / 4) << json.dump();
  EXPECT_GT(held, 0u) << describe(r);
  if (as_root()) {
    EXPECT_GE(own, 0) << "host root could not open an inotify instance while the jail ran";
  } else {
    EXPECT_NE(caller_try.find("caller True"), std::string::npos) << caller_try;
  }
}

// POSIX message queues: bytes are charged to the user up to the host's namespace, like inotify
// instances. The tool makes queues until refused; the caller, as itself, still makes one.
constexpr const char* kMakeQueues =
    "import ctypes, os, sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "class Attr(ctypes.Structure):\n"
    "    _fields_ = [('flags', ctypes.c_long), ('maxmsg', ctypes.c_long),\n"
    "                ('msgsize', ctypes.c_long), ('curmsgs', ctypes.c_long),\n"
    "                ('pad', ctypes.c_long * 4)]\n"
    "attr = Attr(0, 10, 8192, 0)\n"
    "made = 0\n"
    "while made < int(sys.argv[3]):\n"
    "    name = f'/{sys.argv[1]}-{made}'.encode()\n"
    "    if libc.mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, ctypes.byref(attr)) < 0:\n"
    "        print('refused', os.strerror(ctypes.get_errno()), flush=True); break\n"
    "    made += 1\n"
    "print('made', made, flush=True)\n"
    "if sys.argv[2] == 'hold':\n"
    "    import time; print('READY', flush=True); time.sleep(60)\n"
    "for i in range(made): libc.mq_unlink(f'/{sys.argv[1]}-{i}'.encode())\n";

TEST_P(Quotas, TheCallerKeepsMessageQueuesWhileAJailHoldsAllItCan) {
  TempDir work;
  write_file(work / "queues.py", kMakeQueues);
  const std::string status = cwd_ / "status.json";
  auto jail = start({"--no-cwd", "--ro-bind", work.path() + ":/w", "--status-file", status, "--",
                     "python3", "/w/queues.py", "jailq", "hold", "1000"});
  ASSERT_TRUE(jail->wait_for_stdout("READY", 20s));
  // The caller makes one queue (and removes it) while the jail holds its share.
  const std::string as_caller =
      as_root() ? "" : "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  const std::string caller =
      shell_output(as_caller + "/usr/bin/python3 " + shell_quote(work / "queues.py") + " callerq-" +
                   std::to_string(::getpid()) + " once 1 2>&1");
  ::kill(jail->pid(), SIGTERM);
  const RunResult r = jail->wait(20s);
  EXPECT_NE(r.out.find("refused"), std::string::npos) << describe(r);
  EXPECT_EQ(r.out.find("made 0\n"), std::string::npos) << describe(r);
  EXPECT_NE(caller.find("made 1"), std::string::npos) << caller;
  const auto json = nlohmann::json::parse(read_file(status).value_or("{}"));
  rlimit own{};
  ASSERT_EQ(::getrlimit(RLIMIT_MSGQUEUE, &own), 0);
  EXPECT_EQ(json["quotas"].value("RLIMIT_MSGQUEUE", std::uint64_t{0}), own.rlim_cur / 4)
      << json.dump();
}

JAIL_INSTANTIATE_FOR_CALLERS(Quotas);

}  // namespace
}  // namespace jail_test
