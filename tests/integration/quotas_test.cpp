// Per-user kernel quotas are counted in every user namespace up to the host's, charged to the
// jail's owner: a tool that opened inotify instances until refused left its caller — host root,
// or the calling user — none while it ran. The jail's namespace now allows a quarter of the
// host's limit, so the caller's own inotify_init1 still succeeds while a jail holds all it can.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>

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
  auto jail = start(concat({probe_mount(), {"--no-cwd", "--", probe("quota_inotify")}}));
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
  EXPECT_GT(held, 0u) << describe(r);
  if (as_root()) {
    EXPECT_GE(own, 0) << "host root could not open an inotify instance while the jail ran";
  } else {
    EXPECT_NE(caller_try.find("caller True"), std::string::npos) << caller_try;
  }
}

JAIL_INSTANTIATE_FOR_CALLERS(Quotas);

}  // namespace
}  // namespace jail_test
