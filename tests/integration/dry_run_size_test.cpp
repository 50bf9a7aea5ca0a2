// A dry run's layers are capped (--dry-run-size, 1 GiB by default): they live on a tmpfs of that
// size while the tool runs, so the kernel refuses a write past the cap, and the status JSON names
// it. What the tool wrote is then copied into the session whole: every kind of entry overlayfs
// leaves in a layer (opaque directories, whiteouts, hard links, sparse files, fifos, mode-000
// directories) reaches the review and the commit as it would from a layer on disk.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "dry_run_fixture.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

namespace fs = std::filesystem;

class DryRunSize : public DryRun {
 protected:
  nlohmann::json status() {
    const auto text = read_file(status_path());
    if (!text) return nullptr;
    return nlohmann::json::parse(*text, nullptr, false);
  }
  [[nodiscard]] std::string status_path() const { return cwd_ / "status.json"; }
};

TEST_P(DryRunSize, TheDefaultCapIsOneGibAndTheStatusSaysSo) {
  const RunResult r = dry_run("echo x > new.txt", {"--status-file", status_path()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const nlohmann::json json = status();
  ASSERT_TRUE(json.is_object()) << describe(r);
  EXPECT_EQ(json["dry_run"]["size_limit_bytes"], 1ull << 30) << json.dump(2);
  EXPECT_EQ(json["dry_run"]["size_limit_hit"], false) << json.dump(2);
  EXPECT_TRUE(json["limit_hit"].is_null()) << json.dump(2);
  EXPECT_EQ(changes_by_path(session_id())["new.txt"], "added file");
}

TEST_P(DryRunSize, AWritePastTheCapFailsAndIsNamed) {
  const RunResult r = dry_run(
      "echo before > small.txt; dd if=/dev/zero of=big bs=1M count=8 2>/tmp/dd.err; echo dd=$?; "
      "cat /tmp/dd.err",
      {"--dry-run-size", "4M", "--status-file", status_path()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("dd=1"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("No space left on device"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("--dry-run-size"), std::string::npos) << describe(r);
  const nlohmann::json json = status();
  ASSERT_TRUE(json.is_object()) << describe(r);
  EXPECT_EQ(json["limit_hit"], "dry_run_size") << json.dump(2);
  EXPECT_EQ(json["dry_run"]["size_limit_bytes"], 4u << 20) << json.dump(2);
  EXPECT_EQ(json["dry_run"]["size_limit_hit"], true) << json.dump(2);

  // The host saw none of it; the session holds what fitted, and commits it.
  EXPECT_EQ(snapshot(project_), before_);
  const std::string id = session_id();
  const RunResult listed = session_command({"changes", id, "--json"});
  ASSERT_EQ(listed.exit_code, 0) << describe(listed);
  std::uint64_t big = 0;
  for (const auto& change : nlohmann::json::parse(listed.out)) {
    if (change["relative"] == "big") big = change["new"]["size"].get<std::uint64_t>();
  }
  EXPECT_GT(big, 1u << 20) << listed.out;
  EXPECT_LT(big, 4u << 20) << listed.out;
  const RunResult commit = session_command({"commit", id});
  ASSERT_EQ(commit.exit_code, 0) << describe(commit);
  EXPECT_EQ(read_file(project_ + "/small.txt"), "before\n");
  EXPECT_EQ(fs::file_size(project_ + "/big"), big);
}

TEST_P(DryRunSize, EveryKindOfEntryLeavesTheStoreWhole) {
  const RunResult r = dry_run(
      "set -e; mkdir -p deep/er && printf x > deep/er/f; "
      "echo n > n1 && ln n1 n2; ln -s a.txt sym; mkfifo pipe; "
      // box/ was on the host with old1 and old2: made again, it hides them (an opaque dir).
      "rm -r box && mkdir box && echo fresh > box/new; "
      "rm del.txt; "
      "truncate -s 100M sparse && printf tail >> sparse; "
      "echo dated > dated && touch -d @981173106 dated; "
      "mkdir locked && echo inside > locked/f && chmod 000 locked");
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const std::string id = session_id();
  auto changes = changes_by_path(id);
  EXPECT_EQ(changes["box/old1"], "deleted file");
  EXPECT_EQ(changes["del.txt"], "deleted file");
  EXPECT_EQ(changes["pipe"], "added special");
  EXPECT_EQ(changes["sym"], "added symlink");
  EXPECT_EQ(changes["locked/f"], "added file");
  // The layer in the session keeps the hard link as a link. (The tool may set no xattr, so
  // overlayfs's own are what there is to keep: box/ above is opaque by one.)
  const std::string upper = sessions_ + "/" + id + "/layers/0/upper";
  struct stat one {
  }, two{};
  ASSERT_EQ(::stat((upper + "/n1").c_str(), &one), 0);
  ASSERT_EQ(::stat((upper + "/n2").c_str(), &two), 0);
  EXPECT_EQ(one.st_ino, two.st_ino);

  const RunResult commit =
      session_command({"commit", id, project_ + "/deep", project_ + "/n1", project_ + "/n2",
                       project_ + "/sym", project_ + "/box", project_ + "/del.txt",
                       project_ + "/sparse", project_ + "/dated", project_ + "/locked"});
  ASSERT_EQ(commit.exit_code, 0) << describe(commit);
  EXPECT_EQ(read_file(project_ + "/deep/er/f"), "x");
  EXPECT_EQ(read_file(project_ + "/n2"), "n\n");
  EXPECT_EQ(fs::read_symlink(project_ + "/sym"), "a.txt");
  EXPECT_EQ(read_file(project_ + "/box/new"), "fresh\n");
  EXPECT_FALSE(fs::exists(project_ + "/box/old1"));
  EXPECT_FALSE(fs::exists(project_ + "/del.txt"));
  struct stat sparse {
  }, locked{};
  ASSERT_EQ(::stat((project_ + "/sparse").c_str(), &sparse), 0);
  EXPECT_EQ(sparse.st_size, (100 << 20) + 4);
  EXPECT_LT(sparse.st_blocks * 512, 1 << 20) << "the sparse file was filled in";
  ASSERT_EQ(::stat((project_ + "/locked").c_str(), &locked), 0);
  EXPECT_EQ(locked.st_mode & 07777, 0u);
  EXPECT_EQ(read_file(project_ + "/locked/f"), "inside\n");  // the test reads as root
}

TEST_P(DryRunSize, TheCapCanBeLiftedAndABadOneIsRefused) {
  const RunResult lifted =
      dry_run("echo x > new.txt", {"--dry-run-size", "unlimited", "--status-file", status_path()});
  ASSERT_EQ(lifted.exit_code, 0) << describe(lifted);
  const nlohmann::json json = status();
  ASSERT_TRUE(json.is_object()) << describe(lifted);
  EXPECT_TRUE(json["dry_run"]["size_limit_bytes"].is_null()) << json.dump(2);
  EXPECT_EQ(changes_by_path(session_id())["new.txt"], "added file");

  for (const char* bad : {"10", "lots", "-1G"}) {
    const RunResult r = dry_run("true", {"--dry-run-size", bad});
    EXPECT_EQ(r.exit_code, 125) << bad << "\n" << describe(r);
    EXPECT_NE(r.err.find("--dry-run-size '" + std::string(bad) + "'"), std::string::npos)
        << describe(r);
  }
  const RunResult alone = run({"--dry-run-size", "1G", "--", "true"});
  EXPECT_EQ(alone.exit_code, 125) << describe(alone);
  EXPECT_NE(alone.err.find("--dry-run-size is for --dry-run"), std::string::npos)
      << describe(alone);
}

JAIL_INSTANTIATE_FOR_CALLERS(DryRunSize);

}  // namespace
}  // namespace jail_test
