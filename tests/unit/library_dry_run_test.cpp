// The plugin-host side of a dry run: a Spec with dry_run, the session in the Result, its changes
// as data, commit and discard — all through the library, no CLI.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "jail/dry_run.hpp"
#include "jail/error.hpp"
#include "jail/launch.hpp"
#include "jail/spec.hpp"

namespace {

namespace fs = std::filesystem;
constexpr uid_t kNobody = 65534;  // a root caller's tool is this uid on the host

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class LibraryDryRun : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/var/tmp/jail-utest-dryrun-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = pattern;
    project_ = root_ / "project";
    fs::create_directory(project_);
    std::ofstream(project_ / "config.txt") << "debug = false\n";
    std::ofstream(project_ / "stale.log") << "old\n";
    for (const auto& path : {project_, project_ / "config.txt", project_ / "stale.log"}) {
      ASSERT_EQ(::chown(path.c_str(), kNobody, kNobody), 0);  // writable by a root caller's tool
    }
  }
  void TearDown() override { fs::remove_all(root_); }

  jail::Spec spec(const std::string& script) const {
    jail::Spec spec;
    spec.argv = {"/bin/sh", "-c", script};
    spec.env = jail::default_environment();
    spec.mounts.push_back(
        {jail::MountKind::bind, project_.string(), "/work", std::nullopt, "the test"});
    spec.cwd = "/work";
    spec.input = jail::Input::none;
    spec.dry_run = jail::DryRun{(root_ / "sessions").string(), {}};
    return spec;
  }

  fs::path root_;
  fs::path project_;
};

TEST_F(LibraryDryRun, ChangesAsDataThenCommitAndDiscard) {
  const jail::Result result =
      jail::run(spec("echo 'debug = true' > config.txt && rm stale.log && echo hi > added.txt"));
  ASSERT_EQ(result.outcome, jail::Outcome::exited) << (result.error ? result.error->message : "");
  ASSERT_EQ(result.exit_code, 0);
  ASSERT_TRUE(result.dry_run.has_value());
  EXPECT_EQ(result.dry_run->changes, 3u);
  EXPECT_EQ(read_text(project_ / "config.txt"), "debug = false\n");

  const jail::dry_run::Session session =
      jail::dry_run::open_session((root_ / "sessions").string(), result.dry_run->id);
  EXPECT_EQ(session.command,
            (std::vector<std::string>{"/bin/sh", "-c",
                                      "echo 'debug = true' > config.txt && rm stale.log && "
                                      "echo hi > added.txt"}));
  ASSERT_EQ(session.binds.size(), 1u);
  EXPECT_EQ(session.binds[0].target, "/work");
  const std::vector<jail::dry_run::Change> changes = jail::dry_run::changes(session);
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].relative, "added.txt");
  EXPECT_EQ(changes[0].kind, jail::dry_run::ChangeKind::added);
  EXPECT_EQ(changes[1].relative, "config.txt");
  EXPECT_EQ(changes[1].kind, jail::dry_run::ChangeKind::modified);
  EXPECT_EQ(changes[1].old_size, 14u);
  EXPECT_EQ(changes[1].new_size, 13u);
  EXPECT_EQ(read_text(jail::dry_run::new_content_path(session, changes[1])), "debug = true\n");
  EXPECT_EQ(changes[2].relative, "stale.log");
  EXPECT_EQ(changes[2].kind, jail::dry_run::ChangeKind::deleted);

  // Only the config: the other two stay proposals.
  const jail::dry_run::CommitReport report =
      jail::dry_run::commit(session, {{(project_ / "config.txt").string()}, false});
  EXPECT_EQ(report.applied.size(), 1u);
  EXPECT_EQ(read_text(project_ / "config.txt"), "debug = true\n");
  EXPECT_TRUE(fs::exists(project_ / "stale.log"));
  EXPECT_FALSE(fs::exists(project_ / "added.txt"));

  jail::dry_run::discard(session);
  EXPECT_FALSE(fs::exists(session.dir));
  EXPECT_THROW((void)jail::dry_run::open_session((root_ / "sessions").string(), result.dry_run->id),
               jail::Error);
}

TEST_F(LibraryDryRun, ReadOnlyBindsStayBinds) {
  jail::Spec read_only = spec("echo x > /work/new.txt");
  read_only.mounts[0].kind = jail::MountKind::ro_bind;
  const jail::Result result = jail::run(read_only);
  ASSERT_EQ(result.outcome, jail::Outcome::exited);
  EXPECT_NE(result.exit_code, 0) << "a read-only bind is not made writable by a dry run";
  ASSERT_TRUE(result.dry_run.has_value());
  EXPECT_EQ(result.dry_run->changes, 0u);
}

}  // namespace
