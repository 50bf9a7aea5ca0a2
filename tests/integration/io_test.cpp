// What crosses the jail's edge besides the environment: stdin/stdout/stderr pass through, no
// other descriptor does, jail's own logs never reach stdout; the shipped example runs.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optional>

#include <nlohmann/json.hpp>

#include "run_jail.hpp"

namespace jail_test {
namespace {

class Io : public CallerTest {};

// Existence and modification time of `path`, as text ("absent" if it does not exist).
std::string modified_at(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "absent";
  return std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

TEST_P(Io, StdioPassesThrough) {
  RunResult r = run({"--", "sh", "-c", "cat; echo to-err >&2"}, {.stdin_data = "from stdin\n"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "from stdin\n") << describe(r);
  EXPECT_NE(r.err.find("to-err\n"), std::string::npos) << describe(r);
}

TEST_P(Io, LargeOutputArrivesWhole) {
  RunResult r = run({"--", "sh", "-c", "head -c 5000000 /dev/zero; head -c 300000 /dev/zero >&2"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out.size(), 5000000u) << "exit_code=" << r.exit_code;
  EXPECT_EQ(r.err.size(), 300000u) << "exit_code=" << r.exit_code;
}

TEST_P(Io, OnlyStdioReachesTheTool) {
  RunResult r = run(concat({probe_mount(), {"--", probe("list_fds")}}));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "0 1 2\n") << describe(r);
}

TEST_P(Io, CallerFdWithoutCloexecIsNotVisible) {
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  // In jail, /dev/null is fd 42 and will survive exec into jail itself.
  RunResult r =
      run(concat({probe_mount(), {"--", probe("list_fds")}}), {.extra_fd = ExtraFd{fd, 42}});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "0 1 2\n") << describe(r);

  // The same at the first free number, where a leaked descriptor usually lands.
  RunResult low =
      run(concat({probe_mount(), {"--", probe("list_fds")}}), {.extra_fd = ExtraFd{fd, 3}});
  EXPECT_EQ(low.exit_code, 0) << describe(low);
  EXPECT_EQ(low.out, "0 1 2\n") << describe(low);

  RunResult shell = run({"--", "sh", "-c", "test -e /proc/self/fd/42 && echo fd-42-visible; :"},
                        {.extra_fd = ExtraFd{fd, 42}});
  EXPECT_EQ(shell.exit_code, 0) << describe(shell);
  EXPECT_EQ(shell.out, "") << describe(shell);
  close(fd);
}

TEST_P(Io, QuietRunHasOnlyTheToolsOutput) {
  RunResult r = run({"-q", "--", "sh", "-c", "echo out; echo err >&2"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "out\n") << describe(r);
  EXPECT_EQ(r.err, "err\n") << describe(r);
}

TEST_P(Io, VerboseLogsGoToStderrNotStdout) {
  RunResult r = run({"-v", "--", "echo", "only-this"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "only-this\n") << describe(r);
  EXPECT_FALSE(r.err.empty()) << "-v should log something\n" << describe(r);
}

TEST_P(Io, LogFile) {
  TempDir logs;
  std::string path = logs / "jail.log";
  RunResult r = run({"-v", "--log-file", path, "--", "echo", "only-this"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "only-this\n") << describe(r);
  std::optional<std::string> log = read_file(path);
  ASSERT_TRUE(log) << "no log file\n" << describe(r);
  EXPECT_FALSE(log->empty()) << describe(r);
}

TEST_P(Io, JsonLogLinesAreJson) {
  RunResult r = run({"-v", "--log-format", "json", "--", "echo", "only-this"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "only-this\n") << describe(r);
  std::vector<std::string> lines = split_lines(r.err);
  EXPECT_FALSE(lines.empty()) << describe(r);
  for (const std::string& line : lines) {
    if (trim(line).empty()) continue;
    auto parsed = nlohmann::json::parse(line, nullptr, false);
    EXPECT_TRUE(parsed.is_object()) << "not a JSON object: " << line;
  }
}

TEST_P(Io, HelloExampleRuns) {
  std::string source = JAIL_SOURCE_DIR;
  // The example tries to write this file; someone may have run it outside a jail before.
  const std::string marker = source + "/hello-was-here";
  const std::string before = modified_at(marker);
  RunResult r = run({"--", "python3", "examples/hello.py"}, {.cwd = source});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  for (const std::string& expected : std::vector<std::string>{
           "hello from pid ", " as uid " + std::to_string(inside_uid()) + " on host 'jail'",
           "cwd: " + source + "\n", "/etc/shadow visible: False", "network interfaces: ['lo']",
           "write to cwd: refused (Read-only file system)"}) {
    EXPECT_NE(r.out.find(expected), std::string::npos) << "missing: " << expected << "\n"
                                                       << describe(r);
  }
  EXPECT_EQ(r.out.find("hello from pid 1 "), std::string::npos) << describe(r);
  EXPECT_EQ(modified_at(marker), before) << "the example wrote into the source tree";
}

JAIL_INSTANTIATE_FOR_CALLERS(Io);

}  // namespace
}  // namespace jail_test
