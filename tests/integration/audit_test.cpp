// The security team's workflow (issue 9): learn a policy from a run, enforce it, diff policies,
// and keep an audit record of every run.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "run_jail.hpp"

namespace jail_test {
namespace {

constexpr const char* kLearnedScript = R"(import socket, subprocess, threading
print(open("data.txt").read().strip())
t = threading.Thread(target=lambda: print("thread")); t.start(); t.join()
a, b = socket.socketpair(); a.send(b"x"); print(b.recv(1).decode())
print(subprocess.run(["echo", "sub"], capture_output=True, text=True).stdout.strip())
)";

constexpr const char* kPtraceScript = R"(import ctypes
print(ctypes.CDLL(None).ptrace(16, 1, 0, 0))
)";

class PolicyLearn : public CallerTest {};

TEST_P(PolicyLearn, LearnedPolicyRunsTheSameScriptAndDeniesPtrace) {
  TempDir work;
  write_file(work / "data.txt", "data-from-file\n");
  write_file(work / "learned.py", kLearnedScript);
  write_file(work / "other.py", kPtraceScript);
  const std::string policy = work / "learned.policy";

  RunResult learn =
      run({"policy", "learn", "-o", policy, "--", "python3", "learned.py"}, {.cwd = work.path()});
  ASSERT_EQ(learn.exit_code, 0) << describe(learn);
  EXPECT_EQ(learn.out, "data-from-file\nthread\nx\nsub\n") << describe(learn);
  const auto text = read_file(policy);
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("default errno EPERM"), std::string::npos) << *text;
  EXPECT_NE(text->find("allow ioctl if arg1 in {"), std::string::npos) << *text;
  EXPECT_EQ(text->find("allow ptrace"), std::string::npos) << *text;

  // The learned policy passes the policy checker.
  RunResult check = run({"policy", "check", policy}, {.cwd = work.path()});
  EXPECT_EQ(check.exit_code, 0) << describe(check);

  // Enforced, the same script runs with no denial beyond the baseline's fixed clone3 → ENOSYS
  // answer (glibc then uses clone, whose flags the filter can read).
  RunResult again = run(
      {"--policy", policy, "--status-file", work / "status.json", "--", "python3", "learned.py"},
      {.cwd = work.path()});
  EXPECT_EQ(again.exit_code, 0) << describe(again);
  EXPECT_EQ(again.out, "data-from-file\nthread\nx\nsub\n");
  const auto status = nlohmann::json::parse(read_file(work / "status.json").value_or("{}"));
  for (const auto& denial : status["denials"]["first"]) {
    EXPECT_EQ(denial["syscall"], "clone3") << status.dump();
  }

  // A different script that calls ptrace is killed: the learned policy is within "default",
  // which kills ptrace, and a learned policy keeps its base's kills (no errno EPERM in its place).
  RunResult other =
      run({"--policy", policy, "--status-file", work / "other.json", "--", "python3", "other.py"},
          {.cwd = work.path()});
  const auto denied = nlohmann::json::parse(read_file(work / "other.json").value_or("{}"));
  EXPECT_EQ(other.exit_code, 159) << describe(other);
  EXPECT_EQ(trim(other.out), "") << describe(other);  // killed before it could print
  EXPECT_EQ(denied["violation"]["syscall"], "ptrace") << denied.dump();
  EXPECT_TRUE(denied["violation"]["rule"].get<std::string>().starts_with("default.policy:"))
      << denied.dump();
  EXPECT_NE(other.err.find("denied ptrace("), std::string::npos) << describe(other);
}

TEST_P(PolicyLearn, MergeWidensAnExistingPolicyAndSaysWhat) {
  TempDir work;
  write_file(work / "narrow.policy", "default errno EPERM\nallow execve write exit_group\n");
  const std::string merged = work / "merged.policy";
  RunResult learn =
      run({"policy", "learn", "--merge", work / "narrow.policy", "-o", merged, "--", "true"},
          {.cwd = work.path()});
  ASSERT_EQ(learn.exit_code, 0) << describe(learn);
  EXPECT_NE(learn.err.find("jail: added "), std::string::npos) << describe(learn);
  const auto text = read_file(merged).value_or("");
  EXPECT_NE(text.find("# --- the policy as it was ---"), std::string::npos) << text;
  RunResult enforced = run({"--policy", merged, "--", "true"}, {.cwd = work.path()});
  EXPECT_EQ(enforced.exit_code, 0) << describe(enforced);
}

JAIL_INSTANTIATE_FOR_CALLERS(PolicyLearn);

// Hand-checked: python.policy narrows default (no shm, no AF_NETLINK sockets, fewer ioctls) and
// both allow read. The exit code gates a review: 0 when AFTER is not wider, 1 when it is.
TEST(PolicyDiff, DefaultVersusPythonMatchesExpectations) {
  RunResult same = run_jail({"policy", "diff", "default", "default"});
  EXPECT_EQ(same.exit_code, 0) << describe(same);
  EXPECT_TRUE(same.out.empty()) << same.out;
  EXPECT_NE(same.err.find("no differences"), std::string::npos) << describe(same);
  RunResult narrower = run_jail({"policy", "diff", "default", "python"});
  EXPECT_EQ(narrower.exit_code, 0) << describe(narrower);
  EXPECT_NE(narrower.out.find("allow if arg0 in {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK}"),
            std::string::npos)
      << narrower.out;
  for (const char* syscall : {"\nshmget ", "\nsocket ", "\nioctl "}) {
    EXPECT_NE(narrower.out.find(syscall), std::string::npos) << syscall << "\n" << narrower.out;
  }
  EXPECT_EQ(narrower.out.find("\nread "), std::string::npos) << narrower.out;  // both allow read
  RunResult wider = run_jail({"policy", "diff", "python", "default", "--format", "json"});
  EXPECT_EQ(wider.exit_code, 1) << describe(wider);
  EXPECT_EQ(nlohmann::json::parse(wider.out)["wider"], true);
}

TEST(AuditLog, HundredConcurrentRunsLeaveHundredWholeLines) {
  TempDir work;
  const std::string log = work / "audit.jsonl";
  constexpr int kRuns = 100;
  constexpr int kThreads = 10;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kRuns; i += kThreads) {
        run_jail(
            {"--audit-log", log, "--no-cwd", "--", "sh", "-c", "exit " + std::to_string(i % 7)});
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const auto lines = split_lines(read_file(log).value_or(""));
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kRuns));
  std::vector<int> codes(7, 0);
  for (const auto& line : lines) {
    const auto record = nlohmann::json::parse(line);  // throws (fails the test) on a torn line
    EXPECT_TRUE(line.starts_with("{\"schema\":1,")) << "docs/usage.md's audit layout: " << line;
    EXPECT_EQ(record["outcome"], "exited");
    EXPECT_TRUE(record["spec_digest"].get<std::string>().starts_with("sha256:"));
    EXPECT_TRUE(record["policy_digest"].get<std::string>().starts_with("sha256:"));
    EXPECT_EQ(record["runtime"], "native");
    EXPECT_EQ(record["command"][0], "sh");
    ++codes.at(record["exit_code"].get<std::size_t>());
  }
  for (int code = 0; code < 7; ++code)
    EXPECT_EQ(codes[code], (kRuns + 6 - code) / 7) << "exit " << code;
}

// A reviewer reads what the tool could reach from the audit line alone: the network, every mount
// and whether it was writable, the dry run's session, and the rule behind each denial.
TEST(AuditLog, SaysWhatTheToolCouldReachAndWhichRuleRefused) {
  TempDir work;
  const std::string log = work / "audit.jsonl";
  const std::string data = work / "data";
  const std::string out = work / "out";
  const std::string sessions = work / "sessions";
  ::mkdir(data.c_str(), 0755);
  ::mkdir(out.c_str(), 0755);
  ::mkdir((out + "/.git").c_str(), 0755);
  ::mkdir((data + "/.aws").c_str(), 0755);
  ::chmod(out.c_str(), 0777);  // the tool runs as uid 1000 inside
  const RunResult host_net = run_jail({"--audit-log", log, "--no-cwd", "--net", "host", "--ro-bind",
                                       data + ":/data", "--bind", out + ":/out", "--protect",
                                       out + "/.git", "--tmpfs", "/scratch", "--", "python3", "-c",
                                       "import socket\ntry:\n socket.sethostname('x')\n"
                                       "except OSError: pass"});
  ASSERT_EQ(host_net.exit_code, 0) << describe(host_net);
  const RunResult dry =
      run_jail({"--audit-log", log, "--no-cwd", "--dry-run", "--session-dir", sessions, "--bind",
                out + ":/out", "--", "sh", "-c", "echo x > /out/new"});
  ASSERT_EQ(dry.exit_code, 0) << describe(dry);
  const auto lines = split_lines(read_file(log).value_or(""));
  ASSERT_EQ(lines.size(), 2U);
  const auto first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first["net"], "host") << first.dump();
  bool ro_data = false, rw_out = false, tmpfs = false, protect = false;
  for (const auto& mount : first["mounts"]) {
    protect = protect || (mount["source"] == out + "/.git" && mount["target"] == "/out/.git" &&
                          mount["writable"] == false && mount["protected"] == true);
    ro_data = ro_data || (mount["source"] == data && mount["target"] == "/data" &&
                          mount["kind"] == "ro_bind" && mount["writable"] == false);
    rw_out = rw_out || (mount["source"] == out && mount["target"] == "/out" &&
                        mount["kind"] == "bind" && mount["writable"] == true);
    tmpfs = tmpfs || (mount["target"] == "/scratch" && mount["kind"] == "tmpfs");
  }
  EXPECT_TRUE(ro_data && rw_out && tmpfs && protect) << first["mounts"].dump();
  EXPECT_EQ(first["masked"], nlohmann::json::array({data + "/.aws"})) << first.dump();
  ASSERT_EQ(first["denials"]["count"], 1) << first.dump();
  const std::string rule = first["denials"]["first"][0].value("rule", "");
  EXPECT_TRUE(rule.starts_with("default.policy:")) << first["denials"].dump();
  EXPECT_TRUE(first["dry_run"].is_null()) << first.dump();
  const auto second = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(second["net"], "none") << second.dump();
  EXPECT_FALSE(second["dry_run"].value("session", "").empty()) << second.dump();
  (void)run_jail({"discard", "--session-dir", sessions, second["dry_run"].value("session", "")});
}

}  // namespace
}  // namespace jail_test
