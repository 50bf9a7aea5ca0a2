// jail on a real terminal (a tmux pane), as a person uses it: the tool gets a pty of the jail's
// own, sees a prompt and typed input, ^C as SIGINT, window changes as SIGWINCH and end of file;
// afterwards the caller's terminal is exactly as it was.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "../support/proc_stat.hpp"
#include "../support/time_scale.hpp"
#include "../support/wait_until.hpp"
#include "io_tmux.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

using io::Tmux;

// The tool: a line-reading loop that reports its terminal's size at start and on every SIGWINCH
// and survives ^C. os.write in the handler: print() there could re-enter a buffered write.
constexpr const char* kTool = R"PY(import os, signal, sys

def show_size(*_):
    cols, rows = os.get_terminal_size(0)
    os.write(1, ("\nSIZE %dx%d\n" % (cols, rows)).encode())

signal.signal(signal.SIGWINCH, show_size)
show_size()
while True:
    sys.stdout.write("tool> ")
    sys.stdout.flush()
    try:
        line = sys.stdin.readline()
    except KeyboardInterrupt:
        sys.stdout.write("\nKeyboardInterrupt caught\n")
        continue
    if not line:
        break
    print("GOT[" + line.strip().upper() + "]", flush=True)
print("BYE end of file", flush=True)
)PY";

// The pane runs this: jail between two snapshots of the terminal's settings, then stays.
std::string wrapper(const std::string& dir, bool unprivileged) {
  const std::string as = unprivileged ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  return "cd '" + dir + "' || exit 1\n" +
         "stty -g > before.stty\n"
         "stty -a > before.txt\n" +
         as + "'" + JAIL_BINARY + "' -q -- python3 tool.py\n" +
         "echo \"jail-exit=$?\"\n"
         "stty -g > after.stty\n"
         "stty -a | tee after.txt\n"
         "echo WRAPPER-DONE\n"
         "exec sleep 3600\n";
}

class IoTty : public CallerTest {};

TEST_P(IoTty, InteractiveSessionThroughTmux) {
  if (auto missing = io::tmux_missing()) FAIL() << *missing;
  write_file(cwd_ / "tool.py", kTool);
  write_file(cwd_ / "wrapper.sh", wrapper(cwd_.path(), !as_root()), 0755);
  Tmux tmux("sh '" + (cwd_ / "wrapper.sh") + "'", 100, 30);
  std::string screen;
  const auto wait = std::chrono::seconds(20);

  // A prompt, at the size of the caller's terminal.
  ASSERT_TRUE(tmux.wait_for("tool> ", wait, &screen)) << "no prompt:\n" << screen;
  const std::string size = tmux.pane_size();
  EXPECT_TRUE(tmux.wait_for("SIZE " + size + "\n", wait, &screen))
      << "the tool's terminal is not the pane's size " << size << ":\n"
      << screen;

  // Typed input is echoed by the jail's pty and read by the tool.
  tmux.type("hello world");
  tmux.press("Enter");
  ASSERT_TRUE(tmux.wait_for("GOT[HELLO WORLD]", wait, &screen)) << screen;
  EXPECT_NE(screen.find("tool> hello world"), std::string::npos) << "typed input was not echoed:\n"
                                                                 << screen;

  // ^C reaches the tool as SIGINT through its pty (the caller's terminal is raw: jail itself
  // gets no signal), and the tool goes on.
  tmux.press("C-c");
  ASSERT_TRUE(tmux.wait_for("KeyboardInterrupt caught", wait, &screen)) << screen;

  // A window change reaches the tool's pty, and the tool reads the new size.
  tmux.resize(120, 40);
  EXPECT_EQ(tmux.pane_size(), "120x40");
  ASSERT_TRUE(tmux.wait_for("SIZE 120x40", wait, &screen)) << "resize not seen:\n" << screen;
  tmux.resize(90, 25);
  ASSERT_TRUE(tmux.wait_for("SIZE 90x25", wait, &screen)) << "resize not seen:\n" << screen;

  tmux.type("after");
  tmux.press("Enter");
  ASSERT_TRUE(tmux.wait_for("GOT[AFTER]", wait, &screen)) << screen;

  // ^D at an empty line: end of file for the tool, which ends; so does jail.
  tmux.press("C-d");
  ASSERT_TRUE(tmux.wait_for("BYE end of file", wait, &screen)) << screen;
  ASSERT_TRUE(tmux.wait_for("WRAPPER-DONE", wait, &screen)) << screen;
  EXPECT_NE(screen.find("jail-exit=0"), std::string::npos) << screen;

  // The caller's terminal is as it was: every setting, and in particular canonical mode and echo.
  const auto before = read_file(cwd_ / "before.stty");
  const auto after = read_file(cwd_ / "after.stty");
  ASSERT_TRUE(before && after);
  EXPECT_EQ(*after, *before) << "stty -g before and after jail differ";
  const std::string after_text = read_file(cwd_ / "after.txt").value_or("");
  std::set<std::string> settings;
  std::istringstream words(after_text);
  for (std::string word; words >> word;) settings.insert(word);
  for (const char* setting : {"icanon", "echo", "isig", "icrnl", "opost", "onlcr"}) {
    EXPECT_TRUE(settings.count(setting)) << setting << " is not on after jail:\n" << after_text;
  }
  EXPECT_NE(screen.find(" icanon"), std::string::npos) << screen;
  EXPECT_EQ(screen.find("-icanon"), std::string::npos) << screen;
}

// `jail -- seq 3 | cat` at a terminal: the tool's stdin is the jail's pty (the caller's terminal
// raw meanwhile), its stdout the pipe to cat, which writes to the same terminal while jail runs.
// The terminal's output processing stays on for cat: no staircase.
TEST_P(IoTty, APipedStdoutLeavesTheTerminalsOutputProcessingOn) {
  if (auto missing = io::tmux_missing()) FAIL() << *missing;
  const std::string as = as_root() ? "" : "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  write_file(cwd_ / "piped.sh",
             "cd '" + cwd_.path() + "' || exit 1\n" + as + "'" + JAIL_BINARY +
                 "' -q -- sh -c 'seq 3; sleep 1' | cat\n"
                 "echo PIPED-DONE\n"
                 "exec sleep 3600\n",
             0755);
  Tmux tmux("sh '" + (cwd_ / "piped.sh") + "'", 100, 30);
  std::string screen;
  ASSERT_TRUE(tmux.wait_for("PIPED-DONE", std::chrono::seconds(20), &screen)) << screen;
  EXPECT_NE(screen.find("1\n2\n3\nPIPED-DONE"), std::string::npos)
      << "each line should start at the left margin:\n"
      << screen;
}

JAIL_INSTANTIATE_FOR_CALLERS(IoTty);

// Whether the terminal `pid` has as its stdin is in raw mode (no canonical input, no echo).
bool stdin_terminal_is_raw(pid_t pid) {
  const int fd = ::open(("/proc/" + std::to_string(pid) + "/fd/0").c_str(),
                        O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  termios settings{};
  const bool raw = ::tcgetattr(fd, &settings) == 0 && (settings.c_lflag & (ICANON | ECHO)) == 0;
  ::close(fd);
  return raw;
}

// Whether a descendant of `pid` runs `sleep 100` (the jailed tool).
bool tool_runs(pid_t pid) {
  const std::string tool = std::string("sleep") + '\0' + "100" + '\0';
  for (const pid_t descendant : descendants(pid)) {
    if (command_line(descendant) == tool) return true;
  }
  return false;
}

// jail ended by a signal from outside, while the tool waits: the caller's terminal comes back.
class IoTtySignalled : public ::testing::TestWithParam<int> {};

TEST_P(IoTtySignalled, TerminalIsRestored) {
  if (auto missing = io::tmux_missing()) FAIL() << *missing;
  TempDir dir;
  // `exec` keeps the pid: the one written is jail's.
  write_file(dir / "wrapper.sh",
             "cd '" + dir.path() + "' || exit 1\n" +
                 "stty -g > before.stty\n"
                 "sh -c 'echo $$ > jail.pid; exec \"$0\" -q -- sleep 100' '" +
                 JAIL_BINARY + "'\n" +
                 "echo \"jail-exit=$?\"\n"
                 "stty -g > after.stty\n"
                 "echo WRAPPER-DONE\n"
                 "exec sleep 3600\n",
             0755);
  Tmux tmux("sh '" + (dir / "wrapper.sh") + "'", 100, 30);
  std::string screen;
  // The terminal is raw once jail relays it; then the signal.
  const auto deadline = std::chrono::steady_clock::now() + scaled(std::chrono::seconds(20));
  std::optional<std::string> pid_text;
  while (!(pid_text = read_file(dir / "jail.pid")) || pid_text->empty()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "jail did not start";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const pid_t pid = static_cast<pid_t>(std::stol(*pid_text));
  // Past the exec; then jail has set the caller's terminal raw and the tool runs.
  const std::string exe = "/proc/" + std::to_string(pid) + "/exe";
  for (std::error_code ec; std::filesystem::read_symlink(exe, ec) != JAIL_BINARY;) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "jail did not start";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(wait_until([&] { return stdin_terminal_is_raw(pid); }, std::chrono::seconds(20)))
      << "jail never set the caller's terminal raw";
  ASSERT_TRUE(wait_until([&] { return tool_runs(pid); }, std::chrono::seconds(20)))
      << "the tool never ran";
  ASSERT_EQ(::kill(pid, GetParam()), 0);
  ASSERT_TRUE(tmux.wait_for("WRAPPER-DONE", std::chrono::seconds(20), &screen)) << screen;
  const auto before = read_file(dir / "before.stty");
  const auto after = read_file(dir / "after.stty");
  ASSERT_TRUE(before && after);
  EXPECT_EQ(*after, *before) << "jail ended by signal " << GetParam()
                             << " left the caller's terminal changed\n"
                             << screen;
}

std::string signal_name(const ::testing::TestParamInfo<int>& param) {
  return sigabbrev_np(param.param);
}

INSTANTIATE_TEST_SUITE_P(Signals, IoTtySignalled, ::testing::Values(SIGTERM, SIGHUP, SIGALRM),
                         signal_name);

}  // namespace
}  // namespace jail_test
