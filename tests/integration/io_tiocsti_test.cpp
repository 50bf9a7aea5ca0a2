// TIOCSTI from inside the jail never types into the caller's terminal (bwrap's CVE-2017-5226):
// jail runs in a tmux pane, the io_tiocsti probe tries to push a command line into every
// terminal it can reach, and afterwards the pane's input queue — what the caller's shell would
// read next — is checked. A positive control proves the check would see an injection.
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "io_tmux.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

using io::Tmux;

struct Case {
  const char* name;
  std::vector<std::string> flags;  // jail's, before --
  bool stdin_only;                 // stdout and stderr to a file: only stdin is the terminal
  bool all_refused;                // every attempt must fail (EPERM or EIO) and the probe exit 0
};

// For test names and failure messages.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

// The pane runs this: jail with the probe, then what the terminal holds as typed input
// (non-canonical, so a partial line counts too; a read that waits 0.5 s in vain ends it), then
// the control: the host itself injects "K", which the same check must find.
std::string wrapper(const std::string& dir, const Case& c, bool unprivileged) {
  std::string jail = unprivileged ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  jail += std::string("'") + JAIL_BINARY + "' -q";
  for (const std::string& flag : c.flags) jail += " " + flag;
  jail += " --ro-bind '" + std::string(JAIL_PROBE_DIR) + ":/probes' -- /probes/io_tiocsti";
  if (c.stdin_only) jail += " > probe.txt 2>&1";
  return "cd '" + dir + "' || exit 1\n" + "stty -g > before.stty\n" + jail + "\n" +
         "echo \"jail-exit=$?\"\n"
         "stty -icanon min 0 time 5\n"
         "head -c 4096 > pending.txt\n"
         "/usr/bin/python3 -c 'import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b\"K\")'\n"
         "head -c 4096 > control.txt\n"
         "stty \"$(cat before.stty)\"\n"
         "echo WRAPPER-DONE\n"
         "exec sleep 3600\n";
}

class IoTiocsti : public ::testing::TestWithParam<std::tuple<Case, Caller>> {};

TEST_P(IoTiocsti, NothingReachesTheCallersTerminal) {
  if (auto missing = io::tmux_missing()) FAIL() << *missing;
  const auto& [c, caller] = GetParam();
  TempDir dir;
  write_file(dir / "wrapper.sh", wrapper(dir.path(), c, caller == Caller::unprivileged), 0755);
  std::string screen;
  {
    Tmux tmux("sh '" + (dir / "wrapper.sh") + "'", 100, 40);
    ASSERT_TRUE(tmux.wait_for("WRAPPER-DONE", std::chrono::seconds(30), &screen)) << screen;
  }
  const std::string report = c.stdin_only ? read_file(dir / "probe.txt").value_or("") : screen;
  const std::string pending = read_file(dir / "pending.txt").value_or("<no pending.txt>");
  const std::string control = read_file(dir / "control.txt").value_or("<no control.txt>");
  std::printf("[ tiocsti  ] %s: probe says:\n%s", c.name, report.c_str());

  ASSERT_NE(report.find("tiocsti-probe-done"), std::string::npos)
      << "the probe did not run to its end:\n"
      << screen << report;
  EXPECT_EQ(pending, "") << "typed into the caller's terminal from inside the jail\n" << screen;
  EXPECT_EQ(control, "K") << "the check does not see an injection by the host itself";
  if (c.all_refused) {
    EXPECT_NE(screen.find("jail-exit=0"), std::string::npos)
        << "some TIOCSTI succeeded inside the jail:\n"
        << report << screen;
    EXPECT_NE(report.find("tiocsti-probe-done ok=0"), std::string::npos) << report;
    for (const std::string target : {"fd0", "fd1", "fd2"}) {
      for (const std::string request : {"TIOCSTI", "TIOCSTI|1<<32", "TIOCSTI|0xdead<<32"}) {
        const std::string line = target + " " + request + ": ";
        const std::size_t at = report.find(line);
        ASSERT_NE(at, std::string::npos) << line << "\n" << report;
        const std::string result = report.substr(at + line.size(), 5);
        EXPECT_TRUE(result == "EPERM" || result.starts_with("EIO")) << line << result;
      }
    }
  }
}

const Case kCases[] = {
    // The default: a pty of the jail's own; the default policy refuses TIOCSTI on any fd.
    {"pty, default policy", {}, false, true},
    {"pty on stdin only, default policy", {}, true, true},
    // No seccomp filter at all: the tool may push into its own pty, which is not the caller's.
    {"pty, no policy", {"--policy", "none"}, false, false},
    // The caller's terminal itself, in another session: the kernel refuses (not the tool's
    // controlling terminal, no CAP_SYS_ADMIN), the policy too.
    {"--tty never, default policy", {"--tty", "never"}, false, true},
    {"--tty never, no policy", {"--tty", "never", "--policy", "none"}, false, true},
};

std::string case_name(const ::testing::TestParamInfo<std::tuple<Case, Caller>>& info) {
  std::string name;
  for (const char ch : std::string(std::get<0>(info.param).name)) {
    name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  }
  return name + (std::get<1>(info.param) == Caller::root ? "_root" : "_unprivileged");
}

INSTANTIATE_TEST_SUITE_P(Cases, IoTiocsti,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values(Caller::root, Caller::unprivileged)),
                         case_name);

}  // namespace
}  // namespace jail_test
