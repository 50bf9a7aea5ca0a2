// The write gate loses nothing. A commit writes its journal before it touches the host, so one
// killed at any point is rolled back by `jail recover` (or the next command) to byte-, mode- and
// mtime-identical trees, and `jail discard` refuses to drop the only copies meanwhile; an undo
// killed midway is finished. Two commits into one tree run one after the other, and the second
// sees the first's writes as drift. A commit refuses drift below a directory the tool replaced,
// and a change set other than the one reviewed (by its digest).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "dry_run_fixture.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class DryRunJournal : public DryRun {
 protected:
  // Many files of several modes and old mtimes, a directory the tool will replace with a file,
  // and files it deletes: a commit with something to back up at every step.
  void make_big_project(int files) {
    for (int i = 0; i < files; ++i) {
      const std::string path = project_ + "/f" + std::to_string(i);
      write_file(path, "original " + std::to_string(i) + "\n", i % 3 == 0 ? 0600 : 0644);
      const timeval times[2] = {{1'600'000'000 + i, 0}, {1'600'000'000 + i, 0}};
      ASSERT_EQ(::utimes(path.c_str(), times), 0);
    }
    before_ = snapshot(project_, true);
  }

  // The session commands as a process of their own, to be killed.
  std::unique_ptr<JailProcess> start_session_command(std::vector<std::string> args) {
    args.insert(args.begin() + 2, {"--session-dir", sessions_});
    return start(args);
  }

  std::string status_of(const std::string& id) {
    const RunResult list = run({"sessions", "--session-dir", sessions_, "--json"});
    for (const auto& session : nlohmann::json::parse(list.out.empty() ? "[]" : list.out)) {
      if (session.at("id") == id) return session.at("state").get<std::string>();
    }
    return "missing";
  }

  bool has_stray_temporaries() {
    for (const auto& entry : fs::recursive_directory_iterator(project_)) {
      if (entry.path().filename().string().find(".jail-commit-") != std::string::npos) return true;
    }
    return false;
  }
};

constexpr int kFiles = 1500;
constexpr const char* kRewriteAll =
    "for f in f*; do echo rewritten > $f; done; rm f1 f2 f3; chmod 755 f4; rm -r box; "
    "echo now-a-file > box; mkdir -p added/deep; echo new > added/deep/n";

TEST_P(DryRunJournal, AKilledCommitIsRolledBackAndDiscardWaitsForIt) {
  make_big_project(kFiles);
  ASSERT_EQ(dry_run(kRewriteAll).exit_code, 0);
  const std::string id = session_id();

  // One whole commit and undo: how long a commit takes here, and that undo restores mtimes.
  const auto began = Clock::now();
  const RunResult whole = session_command({"commit", id});
  const auto took = Clock::now() - began;
  ASSERT_EQ(whole.exit_code, 0) << describe(whole);
  ASSERT_EQ(session_command({"undo", id}).exit_code, 0);
  ASSERT_EQ(snapshot(project_, true), before_) << "undo restores content, modes and mtimes";
  std::printf(
      "[ measured ] a commit of %d changes took %lld ms\n", kFiles + 4,
      static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));

  int interrupted = 0;
  for (const double point : {0.1, 0.3, 0.5, 0.7, 0.9}) {
    auto commit = start_session_command({"commit", id});
    std::this_thread::sleep_for(
        std::chrono::duration_cast<std::chrono::microseconds>(took * point));
    ::kill(commit->pid(), SIGKILL);
    commit->wait(30s);
    const std::string status = status_of(id);
    if (status == "interrupted") {
      ++interrupted;
      const RunResult discard = session_command({"discard", id});
      EXPECT_EQ(discard.exit_code, 1) << describe(discard);
      EXPECT_NE(discard.err.find("jail recover"), std::string::npos) << describe(discard);
      const RunResult recover = session_command({"recover", id});
      EXPECT_EQ(recover.exit_code, 0) << describe(recover);
      EXPECT_NE(recover.err.find("rolled back"), std::string::npos) << describe(recover);
      EXPECT_EQ(status_of(id), "undone") << "recovered at " << point;
    } else if (status == "committed") {
      ASSERT_EQ(session_command({"undo", id}).exit_code, 0);
    }
    EXPECT_EQ(snapshot(project_, true), before_) << "killed at " << point << " (" << status << ")";
    EXPECT_FALSE(has_stray_temporaries()) << "killed at " << point;
  }
  std::printf("[ measured ] %d of 5 kills landed mid-commit\n", interrupted);
  EXPECT_GE(interrupted, 1) << "no kill landed while the commit was writing";

  // An undo killed midway is finished by the next command.
  ASSERT_EQ(session_command({"commit", id}).exit_code, 0);
  auto undo = start_session_command({"undo", id});
  std::this_thread::sleep_for(std::chrono::duration_cast<std::chrono::microseconds>(took / 3));
  ::kill(undo->pid(), SIGKILL);
  undo->wait(30s);
  const RunResult recover = session_command({"recover", id});
  EXPECT_EQ(recover.exit_code, 0) << describe(recover);
  EXPECT_EQ(status_of(id), "undone");
  EXPECT_EQ(snapshot(project_, true), before_);
  EXPECT_EQ(session_command({"discard", id}).exit_code, 0);
}

// Both sessions rewrote the same large file: the second commit waits for the first and then
// finds the host changed under it.
TEST_P(DryRunJournal, TwoCommitsIntoOneTreeExactlyOneSucceeds) {
  for (int round = 0; round < 2; ++round) {
    const std::string big = "big" + std::to_string(round);
    for (const char fill : {'x', 'y'}) {
      ASSERT_EQ(dry_run(std::string("head -c 50000000 /dev/zero | tr '\\0' '") + fill + "' > " +
                        big + "; echo " + fill + std::to_string(round) + " > a.txt")
                    .exit_code,
                0);
    }
    std::vector<std::string> ids;
    for (const auto& entry : fs::directory_iterator(sessions_)) {
      if (status_of(entry.path().filename()) == "pending") ids.push_back(entry.path().filename());
    }
    ASSERT_EQ(ids.size(), 2u);
    auto first = start_session_command({"commit", ids[0]});
    auto second = start_session_command({"commit", ids[1]});
    const RunResult a = first->wait(60s);
    const RunResult b = second->wait(60s);
    EXPECT_EQ((a.exit_code == 0) + (b.exit_code == 0), 1) << describe(a) << describe(b);
    const RunResult& lost = a.exit_code == 0 ? b : a;
    EXPECT_NE(lost.err.find("on the host since"), std::string::npos) << describe(lost);
    // The host holds the winner's file whole, not a mix.
    const std::string winner = a.exit_code == 0 ? ids[0] : ids[1];
    const std::string content = read_file(project_ + "/a.txt").value_or("");
    std::ifstream in(project_ + "/" + big, std::ios::binary);
    std::string head(16, '\0');
    in.read(head.data(), 16);
    EXPECT_EQ(head, std::string(16, content.front())) << "a.txt says " << content;
    for (const std::string& id : ids) {
      if (id != winner) {
        ASSERT_EQ(session_command({"discard", id}).exit_code, 0);
      }
    }
    ASSERT_EQ(session_command({"discard", winner}).exit_code, 0);
  }
}

TEST_P(DryRunJournal, DriftInsideADirectoryReplacedByAFileIsRefused) {
  ASSERT_EQ(dry_run("rm -r box && echo now-a-file > box").exit_code, 0);
  const std::string id = session_id();
  write_file(project_ + "/box/old1", "edited on the host\n");
  const RunResult commit = session_command({"commit", id});
  EXPECT_EQ(commit.exit_code, 1) << describe(commit);
  EXPECT_NE(commit.err.find("box/old1 (changed on the host since; the commit deletes it)"),
            std::string::npos)
      << describe(commit);
  EXPECT_EQ(read_file(project_ + "/box/old1"), "edited on the host\n");
}

TEST_P(DryRunJournal, OnlyTheReviewedChangeSetCommits) {
  ASSERT_EQ(dry_run("echo reviewed > a.txt").exit_code, 0);
  const std::string id = session_id();
  const RunResult review = session_command({"changes", id, "--digest"});
  ASSERT_EQ(review.exit_code, 0) << describe(review);
  const std::string digest = trim(review.out);
  ASSERT_EQ(digest.rfind("sha256:", 0), 0u) << describe(review);
  // The layer changes after the review (another writer of the session directory).
  const std::string upper = sessions_ + "/" + id + "/layers/0/upper/a.txt";
  {
    std::ofstream out(upper, std::ios::trunc);
    out << "not what was reviewed\n";
  }
  const RunResult refused = session_command({"commit", id, "--expect", digest});
  EXPECT_EQ(refused.exit_code, 1) << describe(refused);
  EXPECT_NE(refused.err.find("not the ones reviewed"), std::string::npos) << describe(refused);
  EXPECT_EQ(read_file(project_ + "/a.txt"), "line1\nline2\n");
  const std::string now = trim(session_command({"changes", id, "--digest"}).out);
  EXPECT_NE(now, digest);
  const RunResult commit = session_command({"commit", id, "--expect", now});
  EXPECT_EQ(commit.exit_code, 0) << describe(commit);
  EXPECT_EQ(read_file(project_ + "/a.txt"), "not what was reviewed\n");
}

TEST_P(DryRunJournal, ASparseFileIsCommittedSparse) {
  ASSERT_EQ(dry_run("truncate -s 1G sparse && printf end >> sparse").exit_code, 0);
  const std::string id = session_id();
  const RunResult stat = session_command({"changes", id, "--stat"});
  EXPECT_NE(stat.out.find("(1.0 GiB, sparse: "), std::string::npos) << describe(stat);
  EXPECT_EQ(stat.out.find("(1.0 GiB written"), std::string::npos) << describe(stat);
  const RunResult commit = session_command({"commit", id});
  ASSERT_EQ(commit.exit_code, 0) << describe(commit);
  struct stat info {};
  ASSERT_EQ(::stat((project_ + "/sparse").c_str(), &info), 0);
  EXPECT_EQ(info.st_size, (1LL << 30) + 3);
  EXPECT_LT(info.st_blocks * 512, 1LL << 20) << "the commit wrote the holes as zeros";
}

// Every commit, undo, recover and discard leaves a line in --audit-log, a refused one too, and
// the session keeps its own history while it lives.
TEST_P(DryRunJournal, TheWriteGateLeavesAnAuditTrail) {
  ASSERT_EQ(dry_run("echo audited > a.txt").exit_code, 0);
  const std::string id = session_id();
  const std::string log = cwd_ / "audit.jsonl";
  write_file(project_ + "/a.txt", "drifted\n");
  EXPECT_EQ(session_command({"commit", id, "--audit-log", log}).exit_code, 1);  // drift
  write_file(project_ + "/a.txt", "line1\nline2\n");
  EXPECT_EQ(session_command({"commit", id, "--audit-log", log, "--force"}).exit_code, 0);
  const std::string history = read_file(sessions_ + "/" + id + "/history.jsonl").value_or("");
  EXPECT_EQ(session_command({"undo", id, "--audit-log", log}).exit_code, 0);
  EXPECT_EQ(session_command({"recover", id, "--audit-log", log}).exit_code, 0);
  EXPECT_EQ(session_command({"discard", id, "--audit-log", log}).exit_code, 0);
  std::vector<nlohmann::json> lines;
  for (const std::string& line : split_lines(read_file(log).value_or("")))
    lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 5u) << read_file(log).value_or("");
  const std::vector<std::pair<std::string, std::string>> expected = {{"commit", "refused"},
                                                                     {"commit", "done"},
                                                                     {"undo", "done"},
                                                                     {"recover", "done"},
                                                                     {"discard", "done"}};
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["event"], expected[i].first) << lines[i].dump();
    EXPECT_EQ(lines[i]["outcome"], expected[i].second) << lines[i].dump();
    EXPECT_EQ(lines[i]["session"], id) << lines[i].dump();
  }
  EXPECT_NE(lines[0]["error"].get<std::string>().find("changed on the host since"),
            std::string::npos);
  EXPECT_EQ(lines[1]["paths"], nlohmann::json::array({project_ + "/a.txt"})) << lines[1].dump();
  EXPECT_NE(history.find("\"event\":\"commit\""), std::string::npos) << history;
}

JAIL_INSTANTIATE_FOR_CALLERS(DryRunJournal);

}  // namespace
}  // namespace jail_test
