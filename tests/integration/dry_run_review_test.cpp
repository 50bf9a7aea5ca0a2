// A review shows everything a commit would do, and nothing the tool wrote can rewrite it or block
// it: empty files added and deleted, what a deleted or replaced directory takes with it, hard
// links as links, file contents with their escapes escaped, and a directory the tool left with
// mode 000.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include <nlohmann/json.hpp>

#include "dry_run_fixture.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

class DryRunReview : public DryRun {};

TEST_P(DryRunReview, EmptyFilesAddedAndDeletedAreListed) {
  write_file(project_ + "/empty-before", "");
  ASSERT_EQ(dry_run("rm empty-before && : > empty-after").exit_code, 0);
  const std::string id = session_id();
  const RunResult patch = session_command({"changes", id});
  EXPECT_EQ(patch.exit_code, 0) << describe(patch);
  EXPECT_NE(patch.out.find("new file " + project_ + "/empty-after (0 B)"), std::string::npos)
      << describe(patch);
  EXPECT_NE(patch.out.find("deleted file " + project_ + "/empty-before (0 B)"), std::string::npos)
      << describe(patch);
  const RunResult stat = session_command({"changes", id, "--stat"});
  EXPECT_NE(stat.out.find("A " + project_ + "/empty-after (0 B)"), std::string::npos)
      << describe(stat);
  EXPECT_NE(stat.out.find("D " + project_ + "/empty-before (0 B)"), std::string::npos)
      << describe(stat);
}

TEST_P(DryRunReview, ADeletedOrReplacedDirectoryShowsWhatItTakes) {
  ASSERT_EQ(dry_run("rm -r box && echo now-a-file > box").exit_code, 0);
  const std::string id = session_id();
  const RunResult patch = session_command({"changes", id});
  EXPECT_NE(patch.out.find("replaced directory " + project_ + "/box/, with what is in it:"),
            std::string::npos)
      << describe(patch);
  EXPECT_NE(patch.out.find("- " + project_ + "/box/old1"), std::string::npos) << describe(patch);
  EXPECT_NE(patch.out.find("- " + project_ + "/box/old2"), std::string::npos) << describe(patch);
  EXPECT_NE(patch.out.find("by a file"), std::string::npos) << describe(patch);
  EXPECT_EQ(patch.out.find("mode "), std::string::npos) << "not a mode change\n" << describe(patch);
  const auto json = nlohmann::json::parse(session_command({"changes", id, "--json"}).out);
  ASSERT_EQ(json.size(), 1u) << json.dump();
  EXPECT_EQ(json[0]["removes"]["count"], 2) << json.dump();

  ASSERT_EQ(session_command({"discard", id}).exit_code, 0);
  ASSERT_EQ(dry_run("rm -r box").exit_code, 0);
  const RunResult stat = session_command({"changes", session_id(), "--stat"});
  EXPECT_NE(stat.out.find("D " + project_ + "/box/ (and what is in it, below)"), std::string::npos)
      << describe(stat);
  EXPECT_NE(stat.out.find("- " + project_ + "/box/old2"), std::string::npos) << describe(stat);
}

TEST_P(DryRunReview, AHardLinkIsShownAsOne) {
  ASSERT_EQ(dry_run("ln a.txt second-name").exit_code, 0);
  const std::string id = session_id();
  const RunResult stat = session_command({"changes", id, "--stat"});
  EXPECT_NE(stat.out.find("second-name (a hard link to a.txt)"), std::string::npos)
      << describe(stat);
  const auto json = nlohmann::json::parse(session_command({"changes", id, "--json"}).out);
  bool linked = false;
  for (const auto& change : json)
    linked = linked || change["new"].value("hard_link_of", "") == "a.txt";
  EXPECT_TRUE(linked) << json.dump();
}

TEST_P(DryRunReview, EscapesInContentReachTheReviewerEscaped) {
  ASSERT_EQ(dry_run("printf 'visible\\n\\033[1A\\033[2Khidden\\n' > a.txt").exit_code, 0);
  const RunResult patch = session_command({"changes", session_id()});
  EXPECT_EQ(patch.exit_code, 0) << describe(patch);
  EXPECT_EQ(patch.out.find('\033'), std::string::npos) << "a raw ESC reached the terminal";
  EXPECT_NE(patch.out.find("+\\x1b[1A\\x1b[2Khidden"), std::string::npos) << describe(patch);
}

// The tool's mode-000 directory is its change to review and commit, not a wall: the review lists
// it and what is in it, and the commit makes it as the tool left it.
TEST_P(DryRunReview, AModeZeroDirectoryBlocksNothing) {
  const RunResult run = dry_run("mkdir locked && echo inside > locked/f && chmod 000 locked");
  ASSERT_EQ(run.exit_code, 0) << describe(run);
  EXPECT_EQ(run.err.find("cannot record"), std::string::npos) << describe(run);
  const std::string id = session_id();
  const RunResult stat = session_command({"changes", id, "--stat"});
  EXPECT_EQ(stat.exit_code, 0) << describe(stat);
  EXPECT_NE(stat.out.find(project_ + "/locked/"), std::string::npos) << describe(stat);
  EXPECT_NE(stat.out.find(project_ + "/locked/f"), std::string::npos) << describe(stat);
  const RunResult commit = session_command({"commit", id});
  EXPECT_EQ(commit.exit_code, 0) << describe(commit);
  EXPECT_EQ(commit.err.find("killed"), std::string::npos) << describe(commit);
  struct stat info {};
  ASSERT_EQ(::stat((project_ + "/locked").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0u);
  EXPECT_EQ(read_file(project_ + "/locked/f"), "inside\n");  // the test reads as root
}

JAIL_INSTANTIATE_FOR_CALLERS(DryRunReview);

}  // namespace
}  // namespace jail_test
