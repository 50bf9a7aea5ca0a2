// --status-file / --status-fd: one JSON object (then a newline) describing the run, with
// separate fields for outcome, exit code, signal and error.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <unistd.h>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "../support/time_scale.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

using nlohmann::json;

// `j[key]` if it is an integer, else -1 (never throws, unlike json::value on a null).
long integer(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer()) return -1;
  return j[key].get<long>();
}

class Status : public CallerTest {
 protected:
  // Runs with --status-file in a directory the caller can write; returns the parsed object.
  json run_with_status_file(const std::vector<std::string>& command, RunResult& result) {
    std::string path = status_dir_ / "status.json";
    result = run(concat({{"--status-file", path, "--"}, command}));
    std::optional<std::string> text = read_file(path);
    if (!text) {
      ADD_FAILURE() << "no status file at " << path << "\n" << describe(result);
      return json();
    }
    return parse_one(*text);
  }

  static json parse_one(const std::string& text) {
    EXPECT_FALSE(text.empty());
    if (text.empty()) return json();
    EXPECT_EQ(text.back(), '\n') << "status must end with a newline: " << text;
    std::string body = text.substr(0, text.size() - 1);
    EXPECT_EQ(body.find('\n'), std::string::npos) << "status must be one line: " << text;
    // The layout's version comes first, so a reader knows it before the rest.
    EXPECT_TRUE(body.starts_with("{\"schema\":")) << text;
    json parsed = json::parse(body, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << "not JSON: " << text;
    EXPECT_TRUE(parsed.is_object()) << text;
    return parsed.is_discarded() ? json() : parsed;
  }

  // Fields every status carries, whatever the outcome.
  static void expect_shape(const json& s) {
    ASSERT_TRUE(s.is_object()) << s.dump();
    EXPECT_EQ(s["schema"], 1) << "the layout docs/usage.md describes: " << s.dump();
    for (const char* key : {"outcome", "exit_code", "signal", "violation", "denials", "wall_ms",
                            "cpu_user_ms", "cpu_sys_ms", "peak_memory_bytes", "error"}) {
      EXPECT_TRUE(s.contains(key)) << "missing \"" << key << "\" in " << s.dump();
    }
    EXPECT_TRUE(s["outcome"].is_string()) << s.dump();
    EXPECT_TRUE(s["signal"].is_number_integer()) << s.dump();
    for (const char* key : {"wall_ms", "cpu_user_ms", "cpu_sys_ms", "peak_memory_bytes"}) {
      EXPECT_TRUE(s[key].is_number()) << key << " in " << s.dump();
      if (s[key].is_number()) {
        EXPECT_GE(s[key].get<double>(), 0) << key << " in " << s.dump();
      }
    }
    ASSERT_TRUE(s["denials"].is_object()) << s.dump();
    EXPECT_TRUE(s["denials"]["count"].is_number_integer()) << s.dump();
    EXPECT_TRUE(s["denials"]["first"].is_array()) << s.dump();
  }

  TempDir status_dir_;
};

TEST_P(Status, ExitedWithCode) {
  RunResult r;
  json s = run_with_status_file({"sh", "-c", "exit 3"}, r);
  EXPECT_EQ(r.exit_code, 3) << describe(r);
  expect_shape(s);
  EXPECT_EQ(s.value("outcome", ""), "exited") << s.dump();
  EXPECT_EQ(integer(s, "exit_code"), 3) << s.dump();
  EXPECT_EQ(integer(s, "signal"), 0) << s.dump();
  EXPECT_TRUE(s["error"].is_null()) << s.dump();
  EXPECT_TRUE(s["violation"].is_null()) << s.dump();
  EXPECT_EQ(integer(s["denials"], "count"), 0) << s.dump();
}

TEST_P(Status, ExitedZero) {
  RunResult r;
  json s = run_with_status_file({"true"}, r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  expect_shape(s);
  EXPECT_EQ(s.value("outcome", ""), "exited") << s.dump();
  EXPECT_EQ(integer(s, "exit_code"), 0) << s.dump();
}

TEST_P(Status, WallTimeIsMeasured) {
  RunResult r;
  json s = run_with_status_file({"sleep", "0.3"}, r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  expect_shape(s);
  if (s.contains("wall_ms") && s["wall_ms"].is_number()) {
    EXPECT_GE(s["wall_ms"].get<double>(), 250) << s.dump();
    EXPECT_LT(s["wall_ms"].get<double>(), scaled(20000.0)) << s.dump();
  }
}

TEST_P(Status, Signaled) {
  RunResult r;
  json s = run_with_status_file({"sh", "-c", "kill -USR1 $$"}, r);
  EXPECT_EQ(r.exit_code, 138) << describe(r);
  expect_shape(s);
  EXPECT_EQ(s.value("outcome", ""), "signaled") << s.dump();
  EXPECT_EQ(integer(s, "signal"), 10) << s.dump();
  EXPECT_TRUE(s["error"].is_null()) << s.dump();
}

TEST_P(Status, CommandNotFound) {
  RunResult r;
  json s = run_with_status_file({"no-such-command-for-jail-tests"}, r);
  EXPECT_EQ(r.exit_code, 127) << describe(r);
  expect_shape(s);
  EXPECT_EQ(s.value("outcome", ""), "setup_error") << s.dump();
  ASSERT_TRUE(s["error"].is_object()) << s.dump();
  EXPECT_EQ(s["error"].value("step", ""), "exec") << s.dump();
  EXPECT_EQ(s["error"].value("errno_name", ""), "ENOENT") << s.dump();
  EXPECT_TRUE(s["error"]["errno"].is_number_integer()) << s.dump();
  EXPECT_EQ(integer(s["error"], "errno"), 2) << s.dump();
  EXPECT_TRUE(s["error"]["message"].is_string()) << s.dump();
}

TEST_P(Status, ExitCodeIsTheToolsOwnAndJailExitCodeAlwaysAnInteger) {
  // exit_code is the tool's own and only there when it exited (null otherwise, so no caller
  // mistakes a signal or a setup error for a status); jail_exit_code is what jail returned.
  struct Case {
    std::vector<std::string> command;
    bool exited;
    int jail_exit_code;
  };
  for (const Case& c :
       {Case{{"sh", "-c", "exit 3"}, true, 3}, Case{{"sh", "-c", "kill -USR1 $$"}, false, 138},
        Case{{"no-such-command-for-jail-tests"}, false, 127}}) {
    RunResult r;
    json s = run_with_status_file(c.command, r);
    ASSERT_TRUE(s.contains("exit_code")) << s.dump();
    EXPECT_EQ(s["exit_code"].is_number_integer(), c.exited) << c.command.back() << ": " << s.dump();
    EXPECT_EQ(s["exit_code"].is_null(), !c.exited) << c.command.back() << ": " << s.dump();
    ASSERT_TRUE(s["jail_exit_code"].is_number_integer()) << s.dump();
    EXPECT_EQ(s["jail_exit_code"].get<int>(), c.jail_exit_code) << s.dump();
    EXPECT_EQ(r.exit_code, c.jail_exit_code) << describe(r);
  }
}

TEST_P(Status, StatusFdGetsTheSameObject) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  RunResult r =
      run({"--status-fd", "9", "--", "sh", "-c", "exit 4"}, {.extra_fd = ExtraFd{fds[1], 9}});
  close(fds[1]);
  std::string text;
  char buf[4096];
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) {
    text.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  EXPECT_EQ(r.exit_code, 4) << describe(r);
  json s = parse_one(text);
  expect_shape(s);
  EXPECT_EQ(s.value("outcome", ""), "exited") << s.dump();
  EXPECT_EQ(integer(s, "exit_code"), 4) << s.dump();
}

TEST_P(Status, StatusNeverOnStdout) {
  RunResult r;
  json s = run_with_status_file({"sh", "-c", "echo tool-output"}, r);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "tool-output\n") << describe(r);
}

// The report files are opened before the tool runs and never through a symlink: a tool that
// could write their directory put links there, and jail (as root) then wrote the status over the
// file one pointed to and created the audit log where the other did.
TEST_P(Status, ReportFilesAreNeverWrittenThroughTheToolsLinks) {
  const std::string out = cwd_.path() + "/out";
  ASSERT_EQ(::mkdir(out.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(out.c_str(), 0777), 0);
  const std::string victim = cwd_.path() + "/victim";
  write_file(victim, "keep\n");
  const RunResult r =
      run({"--no-cwd", "--bind", out + ":/out", "--status-file", out + "/status.json",
           "--audit-log", out + "/audit.log", "--", "sh", "-c",
           "rm -f /out/status.json /out/audit.log; ln -s " + victim + " /out/status.json; ln -s " +
               victim + "2 /out/audit.log"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(read_file(victim), "keep\n") << "the status went through the tool's symlink";
  EXPECT_FALSE(std::filesystem::exists(victim + "2")) << "the audit log followed a symlink";

  // A report path that is a symlink already: refused before anything runs.
  const RunResult linked = run({"--no-cwd", "--status-file", out + "/status.json", "--", "true"});
  EXPECT_EQ(linked.exit_code, 125) << describe(linked);
  EXPECT_NE(linked.err.find("never writes its own output through one"), std::string::npos)
      << describe(linked);
  EXPECT_EQ(read_file(victim), "keep\n");
  // jail's own log, too: it followed the link and appended to the file it led to.
  const RunResult log_linked = run({"--no-cwd", "--log-file", out + "/status.json", "--", "true"});
  EXPECT_EQ(log_linked.exit_code, 125) << describe(log_linked);
  EXPECT_NE(log_linked.err.find("never writes its own output through one"), std::string::npos)
      << describe(log_linked);
  EXPECT_EQ(read_file(victim), "keep\n") << "jail's log went through a symlink";
}

JAIL_INSTANTIATE_FOR_CALLERS(Status);

}  // namespace
}  // namespace jail_test
