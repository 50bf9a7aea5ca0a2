// `jail policy learn` writes a policy only from what it can vouch for: the command it ran stays
// in a comment, the text loads with jail's own policy loader, and what it cannot write is known
// before the tool runs.
#include <gtest/gtest.h>
#include <sys/syscall.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run_jail.hpp"

namespace jail_test {
namespace {

class PolicyLearnText : public CallerTest {};

// A script from someone else, with a line that reads like a rule: it belonged to the command and
// must not become one (it did: `allow ptrace …` was line 3 of the learned policy).
TEST_P(PolicyLearnText, TheCommandStaysInOneCommentLine) {
  const std::string policy = cwd_ / "learned.policy";
  const std::string script = "true\nallow ptrace process_vm_writev kexec_load";
  RunResult learn = run({"policy", "learn", "--no-cwd", "--allow-failed-run", "-o", policy, "--",
                         "sh", "-c", script});
  EXPECT_EQ(learn.exit_code, 127) << describe(learn);  // sh's: there is no `allow` command
  const std::string text = read_file(policy).value_or("");
  for (const auto& line : split_lines(text)) {
    if (line.find("ptrace") != std::string::npos) {
      EXPECT_TRUE(line.starts_with("#")) << text;
    }
  }
  EXPECT_NE(text.find("#   sh -c $'true\\nallow ptrace process_vm_writev kexec_load'\n"),
            std::string::npos)
      << text;
  RunResult check = run({"policy", "check", policy});
  EXPECT_EQ(check.exit_code, 0) << describe(check);
}

JAIL_INSTANTIATE_FOR_CALLERS(PolicyLearnText);

class PolicyLearnMerge : public CallerTest {};

// The supervisor keeps 64 distinct argument sets of a syscall: 70 allowed ones first, then one
// the old policy refuses. Checked against the kept sets only, merge said the old policy "already
// allowed everything seen", and the merged policy refused FIONREAD on the next run.
TEST_P(PolicyLearnMerge, ASyscallWithMoreArgumentSetsThanKeptIsAdded) {
  write_file(cwd_ / "old.policy", "default allow\nerrno EPERM ioctl if arg1 != TCGETS\n");
  const std::string merged = cwd_ / "merged.policy";
  const std::string ioctl = std::to_string(SYS_ioctl);
  std::vector<std::string> calls = {probe("sc_raw")};
  for (int fd = 100; fd < 170; ++fd) {  // not open: EBADF, but seccomp sees each call first
    calls.insert(calls.end(), {ioctl, std::to_string(fd), "0x5401", "0", ","});  // TCGETS
  }
  calls.insert(calls.end(), {ioctl, "100", "0x541B", "0"});  // FIONREAD, call 70
  RunResult learn =
      run(concat({{"policy", "learn", "--no-cwd", "--merge", cwd_ / "old.policy", "-o", merged},
                  probe_mount(),
                  {"--"},
                  calls}));
  ASSERT_EQ(learn.exit_code, 0) << describe(learn);
  EXPECT_NE(learn.err.find("jail: added ioctl"), std::string::npos) << describe(learn);
  RunResult again = run(concat({{"--no-cwd", "--policy", merged}, probe_mount(), {"--"}, calls}));
  EXPECT_NE(again.out.find("result 70 ret=-1 errno=9\n"), std::string::npos)  // EBADF, not EPERM
      << describe(again) << read_file(merged).value_or("");
}

// Counts are read by the person reviewing the merge: "1 calls" read as a slip.
TEST_P(PolicyLearnMerge, ACallMadeOnceIsCountedInTheSingular) {
  write_file(cwd_ / "old.policy", "default allow\nerrno EPERM getpriority\n");
  const std::string merged = cwd_ / "merged.policy";
  RunResult learn =
      run(concat({{"policy", "learn", "--no-cwd", "--merge", cwd_ / "old.policy", "-o", merged},
                  probe_mount(),
                  {"--", probe("sc_raw"), std::to_string(SYS_getpriority), "0", "0"}}));
  ASSERT_EQ(learn.exit_code, 0) << describe(learn);
  EXPECT_NE(learn.err.find("jail: added getpriority (1 call)\n"), std::string::npos)
      << describe(learn);
}

// jail's own calls (execve, write, exit_group) were written again at each merge, even into a
// policy that allows them, and `jail policy check` then warned that each rule never applies.
TEST_P(PolicyLearnMerge, JailsOwnCallsAreWrittenOnceAcrossMerges) {
  TempDir dir;
  const std::string first = dir / "first.policy", second = dir / "second.policy";
  ASSERT_EQ(run({"policy", "learn", "--no-cwd", "-o", first, "--", "true"}).exit_code, 0);
  RunResult merge =
      run({"policy", "learn", "--no-cwd", "--merge", first, "-o", second, "--", "ls", "/"});
  ASSERT_EQ(merge.exit_code, 0) << describe(merge);
  const std::string text = read_file(second).value_or("");
  std::size_t blocks = 0;
  for (std::size_t at = text.find("needed by jail"); at != std::string::npos;
       at = text.find("needed by jail", at + 1)) {
    ++blocks;
  }
  EXPECT_EQ(blocks, 1u) << text;
  EXPECT_NE(text.find("Widened by"), std::string::npos) << "ls needs more than true\n" << text;
  RunResult check = run({"policy", "check", second});
  EXPECT_EQ(check.exit_code, 0) << describe(check);
  EXPECT_EQ(check.err.find("never applies"), std::string::npos) << describe(check);
  EXPECT_EQ(check.out.find("never applies"), std::string::npos) << describe(check);
}

// The loader reads `include "extra.policy"` next to the including file: copied as it was into a
// policy in another directory, it named a file that is not there.
TEST_P(PolicyLearnMerge, RelativeIncludesStillReachTheirFilesFromTheOutputsDirectory) {
  TempDir old_dir, out_dir;
  write_file(old_dir / "old.policy", "default errno EPERM\ninclude \"extra.policy\"\n");
  write_file(old_dir / "extra.policy", "default kill\nallow execve write exit_group\n");
  const std::string merged = out_dir / "merged.policy";
  RunResult learn = run({"policy", "learn", "--no-cwd", "--merge", old_dir / "old.policy", "-o",
                         merged, "--", "true"});
  ASSERT_EQ(learn.exit_code, 0) << describe(learn);
  const std::string text = read_file(merged).value_or("");
  const std::string old_name = std::filesystem::path(old_dir.path()).filename();
  EXPECT_NE(text.find("include \"../" + old_name + "/extra.policy\"\n"), std::string::npos) << text;
  RunResult check = run({"policy", "check", merged});
  EXPECT_EQ(check.exit_code, 0) << describe(check);
}

// The same for `within`: a merged copy of a policy bounded by "strict.policy" next to it was
// bounded by whatever file of that name sat next to the output (`default allow`, here).
TEST_P(PolicyLearnMerge, ARelativeBoundStillNamesItsFileFromTheOutputsDirectory) {
  TempDir old_dir, out_dir;
  write_file(old_dir / "old.policy", "default allow\nwithin \"strict.policy\"\n");
  write_file(old_dir / "strict.policy", "default allow\nkill ptrace\n");
  write_file(out_dir / "strict.policy", "default allow\n");
  const std::string merged = out_dir / "merged.policy";
  RunResult learn = run({"policy", "learn", "--no-cwd", "--merge", old_dir / "old.policy", "-o",
                         merged, "--", "true"});
  ASSERT_EQ(learn.exit_code, 0) << describe(learn);
  EXPECT_EQ(learn.err.find("nothing bounds"), std::string::npos) << "old.policy has a bound\n"
                                                                 << describe(learn);
  const std::string text = read_file(merged).value_or("");
  const std::string old_name = std::filesystem::path(old_dir.path()).filename();
  EXPECT_NE(text.find("within \"../" + old_name + "/strict.policy\"\n"), std::string::npos) << text;
  RunResult explain = run({"policy", "explain", merged, "ptrace"});
  EXPECT_NE(explain.out.find("kill"), std::string::npos) << describe(explain);
}

// A tool that can write the output's directory replaces the file while it runs: jail writes
// nothing, says so, and leaves the tool's file as the tool left it. A root caller's output is
// root's, which the tool (another id, through an idmapped bind) cannot even remove.
TEST_P(PolicyLearnMerge, AnOutputReplacedByTheToolIsNotWrittenThrough) {
  const std::string out = cwd_ / "out.policy";
  RunResult learn =
      run({"policy", "learn", "--no-cwd", "--bind", cwd_.path() + ":/w", "-o", out, "--", "sh",
           "-c", "rm /w/out.policy && printf 'default allow\\n' > /w/out.policy"});
  if (as_root()) {
    EXPECT_EQ(learn.exit_code, 1) << describe(learn);
    EXPECT_NE(learn.err.find("rm: cannot remove '/w/out.policy'"), std::string::npos)
        << describe(learn);
    EXPECT_FALSE(std::filesystem::exists(out)) << "the run failed: nothing written";
    return;
  }
  EXPECT_EQ(learn.exit_code, 125) << describe(learn);
  EXPECT_NE(learn.err.find("was replaced or removed while the tool ran"), std::string::npos)
      << describe(learn);
  EXPECT_EQ(read_file(out).value_or(""), "default allow\n");
}

// The text is loaded again after the run and not written when it no longer loads: here the tool
// removed the file the old policy includes.
TEST_P(PolicyLearnMerge, APolicyThatNoLongerLoadsIsNotWritten) {
  write_file(cwd_ / "old.policy", "default errno EPERM\ninclude \"extra.policy\"\n");
  write_file(cwd_ / "extra.policy", "allow execve write exit_group\n");
  const std::string merged = cwd_ / "merged.policy";
  RunResult learn = run({"policy", "learn", "--no-cwd", "--bind", cwd_.path(), "--cwd", cwd_.path(),
                         "--merge", cwd_ / "old.policy", "-o", merged, "--", "rm", "extra.policy"});
  EXPECT_EQ(learn.exit_code, 125) << describe(learn);
  EXPECT_NE(learn.err.find("cannot read included file"), std::string::npos) << describe(learn);
  EXPECT_FALSE(std::filesystem::exists(merged)) << read_file(merged).value_or("");
}

JAIL_INSTANTIATE_FOR_CALLERS(PolicyLearnMerge);

// What `policy learn` cannot use is refused before the tool runs: the tool's output would
// otherwise be printed by a run whose policy is then never written.
class PolicyLearnRefuses : public CallerTest {
 protected:
  // Runs `policy learn OPTIONS -- echo tool-ran` and expects a usage error naming `why`.
  void expect_refused(const std::vector<std::string>& options, const std::string& why) {
    RunResult learn =
        run(concat({{"policy", "learn", "--no-cwd"}, options, {"--", "echo", "tool-ran"}}));
    EXPECT_EQ(learn.exit_code, 125) << describe(learn);
    EXPECT_EQ(learn.out.find("tool-ran"), std::string::npos) << describe(learn);
    EXPECT_NE(learn.err.find(why), std::string::npos) << why << "\n" << describe(learn);
  }
};

TEST_P(PolicyLearnRefuses, AMergePolicyThatDoesNotLoad) {
  expect_refused({"-o", cwd_ / "out.policy", "--merge", cwd_ / "nonexist.policy"},
                 "cannot merge into");
  EXPECT_FALSE(std::filesystem::exists(cwd_ / "out.policy"));
}

TEST_P(PolicyLearnRefuses, AnOutputThatCannotBeWritten) {
  expect_refused({"-o", "/no/dir/x.policy"}, "cannot write -o /no/dir/x.policy");
  // Never through a symlink: the tool may put one where it can write.
  write_file(cwd_ / "target.txt", "untouched\n");
  std::filesystem::create_symlink(cwd_ / "target.txt", cwd_ / "link.policy");
  expect_refused({"-o", cwd_ / "link.policy"}, "symlink");
  EXPECT_EQ(read_file(cwd_ / "target.txt"), "untouched\n");
}

// `default bogus` was written, and the command exited 0.
TEST_P(PolicyLearnRefuses, ADefaultThatIsNotOneAction) {
  expect_refused({"-o", cwd_ / "out.policy", "--default", "bogus"}, "--default 'bogus'");
  // It would load, as a default and a rule.
  expect_refused({"-o", cwd_ / "out.policy", "--default", "errno EPERM\nallow ptrace"},
                 "control character");
  EXPECT_FALSE(std::filesystem::exists(cwd_ / "out.policy"));
}

// The learning run allows every syscall: a policy given for it was silently not applied.
TEST_P(PolicyLearnRefuses, APolicyForTheLearningRun) {
  expect_refused({"-o", cwd_ / "out.policy", "--policy", "python"}, "--policy");
  expect_refused({"-o", cwd_ / "out.policy", "--policy=default"}, "--policy");
  write_file(cwd_ / "profile.toml", "policy = \"minimal\"\n");
  expect_refused({"-o", cwd_ / "out.policy", "--profile", cwd_ / "profile.toml"}, "--policy");
}

// Under gVisor no syscall reaches jail's supervisor; the run learned nothing.
TEST_P(PolicyLearnRefuses, TheRunscRuntime) {
  expect_refused({"-o", cwd_ / "out.policy", "--runtime", "runsc"}, "--runtime runsc");
}

// As for `jail`: a caller reading the status file learns why nothing ran.
TEST_P(PolicyLearnRefuses, WithAStatusForACallerThatAskedForOne) {
  const std::string status = cwd_ / "status.json";
  expect_refused({"--status-file", status, "-o", cwd_ / "out.policy", "--policy", "python"},
                 "--policy");
  const auto json = nlohmann::json::parse(read_file(status).value_or("{}"));
  EXPECT_EQ(json["outcome"], "setup_error") << json.dump();
}

JAIL_INSTANTIATE_FOR_CALLERS(PolicyLearnRefuses);

class PolicyLearnRun : public CallerTest {};

// These were accepted and ignored.
TEST_P(PolicyLearnRun, ReportsAndLogsAsForJail) {
  const std::string status = cwd_ / "status.json";
  const std::string audit = cwd_ / "audit.jsonl";
  const std::string log = cwd_ / "jail.log";
  RunResult learn = run({"policy",
                         "learn",
                         "--no-cwd",
                         "--allow-failed-run",
                         "-o",
                         cwd_ / "out.policy",
                         "--status-file",
                         status,
                         "--audit-log",
                         audit,
                         "--log-file",
                         log,
                         "--log-format",
                         "json",
                         "-v",
                         "--trace-timing",
                         "--",
                         "sh",
                         "-c",
                         "exit 3"});
  EXPECT_EQ(learn.exit_code, 3) << describe(learn);
  EXPECT_NE(learn.err.find("jail: timing"), std::string::npos) << describe(learn);
  const auto json = nlohmann::json::parse(read_file(status).value_or("{}"));
  EXPECT_EQ(json["outcome"], "exited") << json.dump();
  EXPECT_EQ(json["exit_code"], 3) << json.dump();
  const auto record = nlohmann::json::parse(read_file(audit).value_or("{}"));
  EXPECT_EQ(record["policy"], "learn") << record.dump();
  // No policy was applied: a digest here would be the unused default policy's.
  EXPECT_EQ(record["policy_digest"], "") << record.dump();
  EXPECT_EQ(record["command"][0], "sh") << record.dump();
  bool logged = false;
  for (const auto& line : split_lines(read_file(log).value_or(""))) {
    const auto message = nlohmann::json::parse(line);  // one JSON object a line, or it throws
    logged = logged || message.dump().find("exited with 3") != std::string::npos;
  }
  EXPECT_TRUE(logged) << read_file(log).value_or("");
  EXPECT_NE(read_file(cwd_ / "out.policy")
                .value_or("")
                .find("# WARNING: learned from a run that failed (the tool exited with 3)"),
            std::string::npos);
}

JAIL_INSTANTIATE_FOR_CALLERS(PolicyLearnRun);

class PolicyLearnBase : public CallerTest {};

// Learned within each shipped policy, the result is never wider than it (`policy diff` exits 0),
// and the base is named in the file.
TEST_P(PolicyLearnBase, ALearnedPolicyIsNeverWiderThanItsBase) {
  for (const std::string base : {"default", "python", "minimal"}) {
    SCOPED_TRACE(base);
    const std::string out = cwd_ / (base + "-learned.policy");
    const RunResult learn = run({"policy", "learn", "--no-cwd", "--base", base, "-o", out, "--",
                                 "sh", "-c", "ls / | sort | head -1"});
    ASSERT_EQ(learn.exit_code, 0) << describe(learn);
    EXPECT_NE(read_file(out).value_or("").find("\nwithin \"" + base + "\"\n"), std::string::npos);
    const RunResult diff = run({"policy", "diff", base, out});
    EXPECT_EQ(diff.exit_code, 0) << describe(diff);
    EXPECT_NE(diff.out.find("is not wider than"), std::string::npos) << describe(diff);
  }
}

// A tool that sprays an ignored argument of socket (type and protocol) with one family only:
// the rule names AF_UNIX and nothing else, so socket(AF_INET) stays refused.
TEST_P(PolicyLearnBase, SprayingOtherArgumentsDoesNotWidenTheFamily) {
  const std::string out = cwd_ / "spray.policy";
  const std::string socket = std::to_string(SYS_socket);
  std::vector<std::string> calls = {probe("sc_raw")};
  for (int n = 0; n < 80; ++n) {
    calls.insert(calls.end(), {socket, "1", std::to_string(1 + n % 5), std::to_string(n), ","});
  }
  calls.insert(calls.end(), {std::to_string(SYS_getpid)});
  const RunResult learn =
      run(concat({{"policy", "learn", "--no-cwd", "-o", out}, probe_mount(), {"--"}, calls}));
  ASSERT_EQ(learn.exit_code, 0) << describe(learn);
  const std::string text = read_file(out).value_or("");
  EXPECT_NE(text.find("allow socket if arg0 in {AF_UNIX}\n"), std::string::npos) << text;
  const RunResult inet = run(concat({probe_mount(),
                                     {"--no-cwd", "--policy", out, "--", probe("sc_raw"), socket,
                                      "2", "1", "0", ",", socket, "1", "1", "0"}}));
  EXPECT_NE(inet.out.find("result 0 ret=-1 errno=1\n"), std::string::npos) << describe(inet);
  EXPECT_EQ(inet.out.find("result 1 ret=-1"), std::string::npos) << describe(inet);
  EXPECT_NE(inet.err.find("denied socket(AF_INET"), std::string::npos) << describe(inet);
}

// A learned file has no raw number where the language has a name: --strict keeps every sampled
// value, so every ioctl request, fcntl command, clone flag set and socket family python used is
// in it.
TEST_P(PolicyLearnBase, LearnedValuesAreWrittenByName) {
  const std::string out = cwd_ / "names.policy";
  write_file(cwd_ / "tool.py",
             "import socket, sqlite3, subprocess, threading, sys\n"
             "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
             "db = sqlite3.connect('/tmp/t.db'); db.execute('create table t(x)'); db.commit()\n"
             "subprocess.run(['true'], capture_output=True, check=True)\n"
             "socket.socketpair(); socket.socket(socket.AF_UNIX).close()\n"
             "print(sys.stdout.isatty())\n");
  const RunResult learn =
      run({"policy", "learn", "--strict", "-o", out, "--", "python3", "tool.py"});
  ASSERT_EQ(learn.exit_code, 0) << describe(learn);
  const std::string text = read_file(out).value_or("");
  for (const auto& line : split_lines(text)) {
    if (line.starts_with("#")) continue;
    EXPECT_EQ(line.find("0x"), std::string::npos) << line << "\n" << text;
  }
  EXPECT_NE(text.find("CLONE_THREAD"), std::string::npos) << text;
  EXPECT_NE(text.find("CLONE_VM | CLONE_FS"), std::string::npos) << text;
  EXPECT_NE(text.find("AF_UNIX"), std::string::npos) << text;
  EXPECT_NE(text.find("TCGETS"), std::string::npos) << text;
  EXPECT_EQ(text.find("# family"), std::string::npos) << "--strict writes no family\n" << text;
}

// The run failed: no policy, the tool's status, and why. --allow-failed-run writes it, marked.
TEST_P(PolicyLearnBase, AFailedRunWritesNoPolicy) {
  const std::string out = cwd_ / "failed.policy";
  const RunResult learn =
      run({"policy", "learn", "--no-cwd", "-o", out, "--", "sh", "-c", "ls /nonexistent"});
  EXPECT_EQ(learn.exit_code, 2) << describe(learn);
  EXPECT_NE(learn.err.find("the run failed (the tool exited with 2); no policy was written"),
            std::string::npos)
      << describe(learn);
  EXPECT_FALSE(std::filesystem::exists(out));
  const RunResult killed =
      run({"policy", "learn", "--no-cwd", "--timeout", "1s", "-o", out, "--", "sleep", "30"});
  EXPECT_NE(killed.exit_code, 0) << describe(killed);
  EXPECT_NE(killed.err.find("no policy was written"), std::string::npos) << describe(killed);
  EXPECT_FALSE(std::filesystem::exists(out));
}

// Merging into a policy that allows every call the run made adds nothing, even a syscall made
// with more distinct arguments than the supervisor keeps (read: 70 here), which was once added
// again as `added read (70 calls)`.
TEST_P(PolicyLearnBase, MergeAddsNothingTheOldPolicyAllows) {
  const std::string merged = cwd_ / "merged.policy";
  const std::string read = std::to_string(SYS_read);
  std::vector<std::string> calls = {probe("sc_raw")};
  for (int fd = 100; fd < 170; ++fd) {
    calls.insert(calls.end(), {read, std::to_string(fd), "0", "1", ","});
  }
  calls.insert(calls.end(), {std::to_string(SYS_getpid)});
  const RunResult learn =
      run(concat({{"policy", "learn", "--no-cwd", "--merge", "default", "-o", merged},
                  probe_mount(),
                  {"--"},
                  calls}));
  ASSERT_EQ(learn.exit_code, 0) << describe(learn);
  EXPECT_EQ(learn.err.find("jail: added"), std::string::npos) << describe(learn);
  EXPECT_NE(learn.err.find("default already allowed everything seen"), std::string::npos)
      << describe(learn);
}

JAIL_INSTANTIATE_FOR_CALLERS(PolicyLearnBase);

TEST(PolicyLearnHelp, LearnHasHelpAndPolicyHelpNamesIt) {
  RunResult help = run_jail({"policy", "learn", "-h"});
  EXPECT_EQ(help.exit_code, 0) << describe(help);
  EXPECT_TRUE(help.out.starts_with("Usage: jail policy learn -o OUT.policy")) << describe(help);
  EXPECT_NE(help.out.find("--default ACTION"), std::string::npos) << describe(help);
  RunResult policy = run_jail({"policy", "--help"});
  EXPECT_EQ(policy.exit_code, 0) << describe(policy);
  EXPECT_NE(policy.out.find("jail policy learn -o OUT.policy"), std::string::npos)
      << describe(policy);
}

}  // namespace
}  // namespace jail_test
