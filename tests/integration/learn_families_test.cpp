// A policy learned from ONE ordinary input of a tool runs OTHER ordinary inputs of the same kind,
// because `jail policy learn` widens what the run used to the families it belongs to
// (policies/src/learn_families.cpp). The design set is the tools the families were drawn from;
// the held-out set is tools they were not. A variation that does not pass on purpose (a socket,
// a process the learning run never started) is asserted as refused, naming the call its denied
// line names. Each variation prints a `[ measured ]` row; docs/policies.md keeps the table.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "run_jail.hpp"

namespace jail_test {
namespace {

// Not `python3`: the caller's PATH may lead to a pyenv shim that the jail's own PATH lacks.
constexpr const char* kPython = "/usr/bin/python3";

// Writes SHAPE.json and reads it back.
constexpr const char* kJsonScript = R"py(import json, sys
shapes = {
    "list": list(range(10)),
    "nested": {"name": "caf\u00e9", "tags": ["a", "b"], "inner": {"n": None, "ok": True}},
    "floats": [i / 7 for i in range(2000)],
}
data = shapes[sys.argv[1]]
with open(sys.argv[1] + ".json", "w") as f:
    json.dump(data, f)
with open(sys.argv[1] + ".json") as f:
    print("json", sys.argv[1], json.load(f) == data)
)py";

// A database FILE: `small` creates it, `more` adds rows to it, `indexed` fills a new one in one
// transaction and indexes it.
constexpr const char* kSqliteScript = R"py(import sqlite3, sys
path, mode = sys.argv[1], sys.argv[2]
db = sqlite3.connect(path)
if mode == "small":
    db.execute("create table t (k integer primary key, v text)")
    db.execute("insert into t (v) values ('one'), ('two')")
    db.commit()
elif mode == "more":
    with db:
        db.executemany("insert into t (v) values (?)", [(str(i),) for i in range(100)])
elif mode == "indexed":
    with db:
        db.execute("create table t (k integer primary key, v text)")
        db.executemany("insert into t (v) values (?)", [(str(i),) for i in range(500)])
        db.execute("create index t_v on t (v)")
print("rows", db.execute("select count(*) from t where v is not null").fetchone()[0])
db.close()
)py";

constexpr const char* kSubprocessScript = R"py(import subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print("sub", r.returncode, r.stdout.strip().splitlines()[0])
)py";

constexpr const char* kPoolScript = R"py(import concurrent.futures, sys
with concurrent.futures.ThreadPoolExecutor(max_workers=int(sys.argv[1])) as pool:
    print("pool", sum(pool.map(lambda n: n * n, range(100))))
)py";

constexpr const char* kInetScript = R"py(import socket, sys
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
    print("socket opened")
except OSError as e:
    print("socket refused", e.errno)
    sys.exit(1)
)py";

constexpr const char* kFruit = "pear 3\napple 10\nfig 7\n";

constexpr const char* kTallyScript = R"pl(use strict; use warnings;
my %count;
open(my $fh, '<', $ARGV[0]) or die "open: $!";
while (my $line = <$fh>) { my ($k, $v) = split ' ', $line; $count{$k} += $v; }
close $fh;
print join(",", map { sprintf("%s=%03d", $_, $count{$_}) } sort keys %count), "\n";
)pl";

// Identity for a commit, given on the command line: the jail's HOME has no .gitconfig.
const std::vector<std::string> kGitIdentity = {"-c", "user.name=Jail Test", "-c",
                                               "user.email=jail-test@example.org"};

enum class Expect {
  passes,   // exit 0, the expected output, and no denied line
  refused,  // on purpose: the policy does not reach this far; a denied line names the call
};

// The syscalls named by the supervisor's `jail: denied NAME(…` lines, each once, in order.
std::string denied_calls(const RunResult& run) {
  constexpr std::string_view kDenied = "jail: denied ";
  std::vector<std::string> names;
  for (const auto& line : split_lines(run.err)) {
    if (!line.starts_with(kDenied)) continue;
    const auto end = line.find_first_of("( ", kDenied.size());
    std::string name = line.substr(kDenied.size(), end - kDenied.size());
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : " ") + name;
  return text;
}

// One row of the table: which set, which tool, learned how and run how.
struct Variation {
  std::string_view set;  // "design", "held-out" or "refused"
  std::string_view tool;
  std::string_view what;
  Caller caller = Caller::root;
};

// Prints the row and asserts the expectation. `output` must appear on stdout for a pass; `denied`
// (e.g. "socket(AF_INET") must begin a denied line when the run is expected not to pass.
void expect(const Variation& variation, const RunResult& run, std::string_view output,
            Expect expected, const std::string& denied = {}) {
  const bool passed = run.exit_code == 0 && run.err.find("denied") == std::string::npos &&
                      run.out.find(output) != std::string::npos;
  const std::string calls = denied_calls(run);
  std::string measured = passed ? "passed" : calls.empty() ? "failed" : "refused";
  if (!passed) measured += " (exit " + std::to_string(run.exit_code) + "; denied " + calls + ")";
  std::cout << "[ measured ] " << std::left << std::setw(9) << variation.set << std::setw(8)
            << variation.tool << std::setw(13)
            << (variation.caller == Caller::root ? "root" : "unprivileged") << std::setw(60)
            << variation.what << " " << measured << std::endl;
  const std::string context = std::string(variation.tool) + ": " + std::string(variation.what);
  switch (expected) {
    case Expect::passes:
      EXPECT_TRUE(passed) << context << "\nexpected output: " << output << "\n" << describe(run);
      break;
    case Expect::refused:
      EXPECT_FALSE(passed) << context << ": a family now covers it; update the test and the "
                           << "table in docs/policies.md\n"
                           << describe(run);
      EXPECT_NE(run.err.find("jail: denied " + denied), std::string::npos)
          << context << ": expected a denied " << denied << "\n"
          << describe(run);
      break;
  }
}

// The tools here are the distribution's; a host without one skips its case.
bool installed(const std::string& tool) {
  return ::access(("/usr/bin/" + tool).c_str(), X_OK) == 0;
}

// A scratch directory the tool runs in, writable, and nothing else of the host's: every run
// learns and is enforced with the same mounts, from whatever directory the test started in.
class Bench {
 public:
  explicit Bench(Caller caller = Caller::root) : caller_(caller) {}

  [[nodiscard]] std::string operator/(std::string_view name) const { return dir_ / name; }

  // `jail policy learn [flags] -o DIR/NAME.policy -- COMMAND`; the policy's path, or "" (and a
  // failure) when none was written.
  [[nodiscard]] std::string learn(const std::string& name, const std::vector<std::string>& command,
                                  const std::vector<std::string>& flags = {}) const {
    const std::string policy = dir_ / (name + ".policy");
    const RunResult run = run_jail(
        concat({{"policy", "learn", "-o", policy}, flags, mounts(), {"--"}, command}), options());
    EXPECT_EQ(run.exit_code, 0) << describe(run);
    if (run.exit_code != 0 || !std::filesystem::exists(policy)) return "";
    return policy;
  }

  // COMMAND under `--policy POLICY`; an empty POLICY leaves jail's default policy.
  [[nodiscard]] RunResult run(const std::string& policy,
                              const std::vector<std::string>& command) const {
    std::vector<std::string> policy_option;
    if (!policy.empty()) policy_option = {"--policy", policy};
    return run_jail(concat({policy_option, mounts(), {"--"}, command}), options());
  }

 private:
  [[nodiscard]] std::vector<std::string> mounts() const {
    return {"--no-cwd", "--bind", dir_.path(), "--cwd", dir_.path()};
  }
  [[nodiscard]] RunOptions options() const { return {.caller = caller_, .cwd = dir_.path()}; }

  Caller caller_;
  TempDir dir_;
};

// ---- design set: the tools the families were drawn from ----

TEST(LearnFamiliesDesign, PythonJsonLearnedOnAListDumpsAndLoadsOtherData) {
  Bench bench;
  write_file(bench / "json_io.py", kJsonScript);
  const std::string policy = bench.learn("json", {kPython, "json_io.py", "list"});
  ASSERT_FALSE(policy.empty());
  expect({"design", "python3", "json: learned on a list, run on nested dicts"},
         bench.run(policy, {kPython, "json_io.py", "nested"}), "json nested True", Expect::passes);
  expect({"design", "python3", "json: learned on a list, run on 2000 floats"},
         bench.run(policy, {kPython, "json_io.py", "floats"}), "json floats True", Expect::passes);
}

TEST(LearnFamiliesDesign, PythonSqliteLearnedOnASmallTableRunsATransactionWithAnIndex) {
  Bench bench;
  write_file(bench / "db.py", kSqliteScript);
  const std::string policy = bench.learn("sqlite", {kPython, "db.py", "a.db", "small"});
  ASSERT_FALSE(policy.empty());
  expect({"design", "python3", "sqlite3: learned creating a.db, run adding rows to it"},
         bench.run(policy, {kPython, "db.py", "a.db", "more"}), "rows 102", Expect::passes);
  expect({"design", "python3", "sqlite3: learned creating a.db, run 500 rows + index"},
         bench.run(policy, {kPython, "db.py", "b.db", "indexed"}), "rows 500", Expect::passes);
}

TEST(LearnFamiliesDesign, PythonSubprocessLearnedWithEchoRunsOtherCommands) {
  if (!installed("sh")) GTEST_SKIP() << "no /usr/bin/sh";
  Bench bench;
  write_file(bench / "sub.py", kSubprocessScript);
  const std::string policy = bench.learn("subprocess", {kPython, "sub.py", "echo", "hi"});
  ASSERT_FALSE(policy.empty());
  expect({"design", "python3", "subprocess: learned with echo, run with ls /usr"},
         bench.run(policy, {kPython, "sub.py", "ls", "/usr"}), "sub 0 bin", Expect::passes);
  // dash asks getpid() for $$ as it starts, which neither python nor echo did: process queries
  // are allowed to every tool for that reason.
  expect({"design", "python3", "subprocess: learned with echo, run with sh -c pipe"},
         bench.run(policy, {kPython, "sub.py", "sh", "-c", "echo a | tr a b"}), "sub 0 b",
         Expect::passes);
}

TEST(LearnFamiliesDesign, PythonThreadPoolLearnedWithTwoWorkersRunsEight) {
  Bench bench;
  write_file(bench / "pool.py", kPoolScript);
  const std::string policy = bench.learn("pool", {kPython, "pool.py", "2"});
  ASSERT_FALSE(policy.empty());
  expect({"design", "python3", "ThreadPoolExecutor: learned with 2 workers, run with 8"},
         bench.run(policy, {kPython, "pool.py", "8"}), "pool 328350", Expect::passes);
}

TEST(LearnFamiliesDesign, GitLearnedOnInitInitsAnotherButCannotReadARepository) {
  if (!installed("git")) GTEST_SKIP() << "no /usr/bin/git";
  Bench bench;
  const std::string policy = bench.learn("git", {"git", "init", "-q", "repo1"});
  ASSERT_FALSE(policy.empty());
  expect({"design", "git", "learned on git init repo1, run git init nested/repo2"},
         bench.run(policy, {"git", "init", "-q", "nested/repo2"}), "", Expect::passes);
  EXPECT_TRUE(std::filesystem::is_directory(bench / "nested/repo2/.git"));
  // repo1 gets a commit under jail's default policy, so that `log` has one to show.
  const RunResult first = bench.run("", concat({{"git", "-C", "repo1"},
                                                kGitIdentity,
                                                {"commit", "-q", "--allow-empty", "-m", "first"}}));
  ASSERT_EQ(first.exit_code, 0) << describe(first);
  // git refuses a repository not owned by geteuid() ("dubious ownership"), and `git log` asks
  // whether its output is a terminal; `git init` did neither. Identity and terminal queries are
  // allowed to every tool for that reason.
  expect({"design", "git", "learned on git init repo1, run git -C repo1 status"},
         bench.run(policy, {"git", "-C", "repo1", "status", "--short"}), "", Expect::passes);
  expect({"design", "git", "learned on git init repo1, run git -C repo1 log"},
         bench.run(policy, {"git", "-C", "repo1", "log", "--oneline"}), " first", Expect::passes);
  // On purpose: a commit forks `git maintenance`, and `git init` started no process, so the
  // learned policy refuses child processes. git says "cannot fork()" and still exits 0.
  expect({"design", "git", "learned on git init repo1, run a commit in repo1"},
         bench.run(policy, concat({{"git", "-C", "repo1"},
                                   kGitIdentity,
                                   {"commit", "-q", "--allow-empty", "-m", "second"}})),
         "", Expect::refused, "pipe2(");
}

// The one case run for both callers: the unprivileged caller's learning run and enforced runs
// take the same path as root's.
class LearnFamiliesCallers : public CallerTest {};

TEST_P(LearnFamiliesCallers, ShLearnedOnOnePipelineRunsOthers) {
  Bench bench(caller());
  const std::string policy = bench.learn("sh", {"sh", "-c", "ls /usr | sort | head -3"});
  ASSERT_FALSE(policy.empty());
  expect({"design", "sh", "learned on ls /usr | sort | head -3, run ls /etc | sort -r", caller()},
         bench.run(policy, {"sh", "-c", "ls /etc | sort -r | head -5"}), "\n", Expect::passes);
  expect({"design", "sh", "learned on ls /usr | sort | head -3, run ls -R | head", caller()},
         bench.run(policy, {"sh", "-c", "ls -R /usr/share/doc | head -20"}),
         "/usr/share/doc:", Expect::passes);
  // On purpose: ls -l names each file's owner, and glibc first asks nscd through
  // socket(AF_UNIX, SOCK_STREAM). Sockets are never a family. Refused, glibc reads /etc/passwd
  // instead (exit 0), and the denied line says what was refused.
  expect({"design", "sh", "learned on ls /usr | sort | head -3, run ls -la /etc", caller()},
         bench.run(policy, {"sh", "-c", "ls -la /etc | sort -r | head -5"}), "total",
         Expect::refused, "socket(AF_UNIX");
}

JAIL_INSTANTIATE_FOR_CALLERS(LearnFamiliesCallers);

// ---- held-out set: tools the families were not designed on ----

TEST(LearnFamiliesHeldOut, PerlLearnedOnAOneLinerRunsAScriptWithAHash) {
  if (!installed("perl")) GTEST_SKIP() << "no /usr/bin/perl";
  Bench bench;
  write_file(bench / "fruit.txt", kFruit);
  write_file(bench / "tally.pl", kTallyScript);
  const std::string policy = bench.learn("perl", {"perl", "-e", "print \"hello\\n\""});
  ASSERT_FALSE(policy.empty());
  expect({"held-out", "perl", "learned on print, run hash + sort + sprintf + file"},
         bench.run(policy, {"perl", "tally.pl", "fruit.txt"}), "apple=010,fig=007,pear=003\n",
         Expect::passes);
  expect({"held-out", "perl", "learned on print, run -ne with a regex on a file"},
         bench.run(policy, {"perl", "-ne", "print if /apple/", "fruit.txt"}), "apple 10\n",
         Expect::passes);
}

TEST(LearnFamiliesHeldOut, AwkLearnedOnASumRunsOtherPrograms) {
  if (!installed("awk")) GTEST_SKIP() << "no /usr/bin/awk";
  Bench bench;
  write_file(bench / "fruit.txt", kFruit);
  const std::string policy =
      bench.learn("awk", {"awk", "{ s += $2 } END { print s }", "fruit.txt"});
  ASSERT_FALSE(policy.empty());
  expect({"held-out", "awk", "learned on a sum, run arrays + for-in on /etc/passwd"},
         bench.run(policy,
                   {"awk", "-F:",
                    "{ n[$NF]++ } END { for (k in n) c++; print (c > 0 ? \"shells\" : \"none\") }",
                    "/etc/passwd"}),
         "shells\n", Expect::passes);
  expect(
      {"held-out", "awk", "learned on a sum, run printf + toupper + length"},
      bench.run(policy, {"awk", "{ printf \"%-6s %d\\n\", toupper($1), length($1) }", "fruit.txt"}),
      "APPLE  5\n", Expect::passes);
}

TEST(LearnFamiliesHeldOut, SedLearnedOnASubstitutionRunsOtherScripts) {
  if (!installed("sed")) GTEST_SKIP() << "no /usr/bin/sed";
  Bench bench;
  write_file(bench / "fruit.txt", kFruit);
  const std::string policy = bench.learn("sed", {"sed", "s/apple/APPLE/", "fruit.txt"});
  ASSERT_FALSE(policy.empty());
  expect({"held-out", "sed", "learned on s///, run -n 2,3p"},
         bench.run(policy, {"sed", "-n", "2,3p", "fruit.txt"}), "apple 10\nfig 7\n",
         Expect::passes);
  expect({"held-out", "sed", "learned on s///, run /d and a bracket expression"},
         bench.run(policy, {"sed", "-e", "/fig/d", "-e", "s/[0-9][0-9]*/N/", "fruit.txt"}),
         "pear N\napple N\n", Expect::passes);
}

TEST(LearnFamiliesHeldOut, SedInPlaceLearnedOnOneFileEditsAnother) {
  if (!installed("sed")) GTEST_SKIP() << "no /usr/bin/sed";
  Bench bench;
  write_file(bench / "one.txt", kFruit);
  write_file(bench / "two.txt", kFruit);
  const std::string policy = bench.learn("sed-i", {"sed", "-i", "s/apple/APPLE/", "one.txt"});
  ASSERT_FALSE(policy.empty());
  expect({"held-out", "sed", "learned on -i s/// one.txt, run -i /d two.txt"},
         bench.run(policy, {"sed", "-i", "-e", "/fig/d", "-e", "s/pear/PEAR/", "two.txt"}), "",
         Expect::passes);
  EXPECT_EQ(read_file(bench / "two.txt"), "PEAR 3\napple 10\n");
}

TEST(LearnFamiliesHeldOut, TarLearnedOnCreatingAnArchiveCreatesAndListsOthers) {
  if (!installed("tar") || !installed("gzip")) GTEST_SKIP() << "no /usr/bin/tar or gzip";
  Bench bench;
  for (const char* dir : {"dirA", "dirA/sub", "dirB"})
    std::filesystem::create_directory(bench / dir);
  write_file(bench / "dirA/a.txt", "a\n");
  write_file(bench / "dirA/sub/b.txt", "b\n");
  for (const char* name : {"f1", "f2", "f3"})
    write_file(bench / (std::string("dirB/") + name), name);
  std::filesystem::create_symlink("f1", bench / "dirB/link");
  // gzip is a child of tar: child processes come in with it.
  const std::string policy = bench.learn("tar", {"tar", "czf", "a.tgz", "dirA"});
  ASSERT_FALSE(policy.empty());
  expect({"held-out", "tar", "learned on czf a.tgz dirA, run czf b.tgz dirB"},
         bench.run(policy, {"tar", "czf", "b.tgz", "dirB"}), "", Expect::passes);
  EXPECT_GT(std::filesystem::file_size(bench / "b.tgz"), 0u);
  expect({"held-out", "tar", "learned on czf a.tgz dirA, run tzf a.tgz"},
         bench.run(policy, {"tar", "tzf", "a.tgz"}), "dirA/sub/b.txt\n", Expect::passes);
}

TEST(LearnFamiliesHeldOut, FindLearnedOnANameSearchRunsTypeAndNewerSearches) {
  if (!installed("find")) GTEST_SKIP() << "no /usr/bin/find";
  Bench bench;
  write_file(bench / "old.txt", "old\n");
  write_file(bench / "fresh.txt", "fresh\n");
  const auto past = std::filesystem::file_time_type::clock::now() - std::chrono::hours(24);
  std::filesystem::last_write_time(bench / "old.txt", past);
  const std::string policy =
      bench.learn("find", {"find", "/usr/share", "-maxdepth", "2", "-name", "*.txt"});
  ASSERT_FALSE(policy.empty());
  expect({"held-out", "find", "learned on -name '*.txt', run -type d"},
         bench.run(policy, {"find", "/usr/share", "-maxdepth", "1", "-type", "d"}),
         "/usr/share/doc\n", Expect::passes);
  const RunResult newer = bench.run(policy, {"find", ".", "-newer", "old.txt", "-name", "*.txt"});
  expect({"held-out", "find", "learned on -name '*.txt', run -newer in the cwd"}, newer,
         "./fresh.txt\n", Expect::passes);
  EXPECT_EQ(newer.out.find("old.txt"), std::string::npos) << describe(newer);
}

// ---- variations that on purpose do not pass ----

TEST(LearnFamiliesRefused, PythonLearnedSingleThreadedCannotStartAThreadPool) {
  Bench bench;
  write_file(bench / "json_io.py", kJsonScript);
  write_file(bench / "pool.py", kPoolScript);
  const std::string policy = bench.learn("json", {kPython, "json_io.py", "list"});
  ASSERT_FALSE(policy.empty());
  // The threads family comes in with a thread (clone with CLONE_THREAD), and there was none.
  expect({"refused", "python3", "learned single-threaded, run a pool of 8 threads"},
         bench.run(policy, {kPython, "pool.py", "8"}), "pool", Expect::refused, "clone(");
}

TEST(LearnFamiliesRefused, PythonLearnedWithoutNetworkingCannotOpenAnInetSocket) {
  Bench bench;
  write_file(bench / "json_io.py", kJsonScript);
  write_file(bench / "inet.py", kInetScript);
  const std::string policy = bench.learn("json", {kPython, "json_io.py", "list"});
  ASSERT_FALSE(policy.empty());
  // Under jail's default policy the same socket opens (in the jail's empty network namespace):
  // the refusal below is the learned policy's.
  const RunResult unlearned = bench.run("", {kPython, "inet.py"});
  EXPECT_EQ(unlearned.out, "socket opened\n") << describe(unlearned);
  const RunResult learned = bench.run(policy, {kPython, "inet.py"});
  expect({"refused", "python3", "learned without networking, run socket(AF_INET)"}, learned,
         "socket opened", Expect::refused, "socket(AF_INET");
  EXPECT_EQ(learned.out, "socket refused 1\n") << describe(learned);  // EPERM, the learned default
}

TEST(LearnFamiliesRefused, StrictLearnedOnLsCannotListLong) {
  Bench bench;
  const std::string policy = bench.learn("strict", {"ls", "/usr"}, {"--strict"});
  ASSERT_FALSE(policy.empty());
  // --strict keeps the exact samples: ls -l's extended attributes (lgetxattr) were never asked
  // for; what follows (abort's signal calls) is refused too, and ls dies of SIGSEGV.
  expect({"refused", "ls", "--strict learned on ls /usr, run ls -la /etc"},
         bench.run(policy, {"ls", "-la", "/etc"}), "total", Expect::refused, "lgetxattr(");
}

TEST(LearnFamiliesRefused, SedLearnedReadingCannotEditInPlace) {
  Bench bench;
  write_file(bench / "fruit.txt", kFruit);
  write_file(bench / "copy.txt", kFruit);
  const std::string policy = bench.learn("sed", {"sed", "s/apple/APPLE/", "fruit.txt"});
  ASSERT_FALSE(policy.empty());
  // Another kind of run: writing files was never brought in (its umask is refused first).
  expect({"refused", "sed", "learned on s/// to stdout, run -i on a file"},
         bench.run(policy, {"sed", "-i", "s/fig/FIG/", "copy.txt"}), "", Expect::refused, "umask(");
  EXPECT_EQ(read_file(bench / "copy.txt"), kFruit);
}

}  // namespace
}  // namespace jail_test
