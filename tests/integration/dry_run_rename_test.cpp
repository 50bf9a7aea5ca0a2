// A directory renamed in a dry run. For a root caller the layer is an overlay made in the initial
// namespace, which records the rename; the commit then writes the renamed directory with all it
// held, what the tool changed in it after the rename included. Checked by content: the committed
// project equals a copy of the project on which the same script ran with no jail at all.
// An unprivileged caller's overlay cannot record a rename (EXDEV, documented): mv falls back to
// copying, and that commits the same tree.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "dry_run_fixture.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

namespace fs = std::filesystem;

class DryRunRename : public DryRun {
 protected:
  void SetUp() override {
    DryRun::SetUp();
    // A tree to rename, owned as the project is (the tool's own through the idmapping).
    for (const char* dir : {"tree", "tree/inner", "tree/inner/deeper"}) {
      ASSERT_EQ(::mkdir((project_ + "/" + dir).c_str(), 0755), 0);
      ASSERT_EQ(::chown((project_ + "/" + dir).c_str(), kNobodyUid, kNobodyGid), 0);
    }
    write_file(project_ + "/tree/top.txt", "top\n");
    write_file(project_ + "/tree/gone.txt", "deleted after the rename\n");
    write_file(project_ + "/tree/inner/mid.txt", "mid\n", 0600);
    write_file(project_ + "/tree/inner/deeper/leaf.bin", std::string("\0\1\2leaf", 7), 0755);
    ASSERT_EQ(::symlink("top.txt", (project_ + "/tree/link").c_str()), 0);
    ASSERT_EQ(::lchown((project_ + "/tree/link").c_str(), kNobodyUid, kNobodyGid), 0);
    before_ = snapshot(project_);
  }

  // The project as the script leaves it without a jail: run on a copy, as root.
  Tree expected(const std::string& script) {
    const std::string copy = expected_dir_.path() + "/project";
    fs::copy(project_, copy, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    const std::string out = shell_output("cd '" + copy + "' && " + script + " 2>&1; echo rc=$?");
    EXPECT_NE(out.find("rc=0"), std::string::npos) << out;
    return snapshot(copy);
  }

  TempDir expected_dir_;
};

// The tool renames a directory (rename(2) itself, which must not fail), renames one inside it,
// and then edits, adds and deletes in the renamed tree.
constexpr const char* kRenames =
    "python3 -c \"import os; os.rename('tree', 'moved'); "
    "os.rename('moved/inner', 'moved/inner2')\" && "
    "echo edited >> moved/top.txt && echo new > moved/inner2/added.txt && rm moved/gone.txt && "
    "mkdir moved/fresh && echo f > moved/fresh/f";

TEST_P(DryRunRename, ARenamedDirectoryIsCommittedWithAllItHeld) {
  if (!as_root()) {
    GTEST_SKIP() << "an unprivileged caller's layer cannot record a directory rename (EXDEV); "
                    "UnprivilegedRenameIsRefusedAndMvFallsBack shows what it does instead";
  }
  const Tree want = expected(kRenames);
  for (const char* size : {"1G", "unlimited"}) {
    SCOPED_TRACE(std::string("--dry-run-size ") + size);
    const RunResult r = dry_run(kRenames, {"--dry-run-size", size});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(snapshot(project_), before_) << "the host changed before the commit";
    const std::string id = session_id();
    const auto changes = changes_by_path(id);
    EXPECT_EQ(changes.at("tree"), "deleted directory");
    EXPECT_EQ(changes.at("moved/inner2/deeper/leaf.bin"), "added file");
    const RunResult commit = session_command({"commit", id});
    ASSERT_EQ(commit.exit_code, 0) << describe(commit);
    EXPECT_EQ(snapshot(project_), want);
    // And undo puts the tree back where it was, whole.
    const RunResult undo = session_command({"undo", id});
    ASSERT_EQ(undo.exit_code, 0) << describe(undo);
    EXPECT_EQ(snapshot(project_), before_);
    ASSERT_EQ(session_command({"discard", id}).exit_code, 0);
  }
}

TEST_P(DryRunRename, UnprivilegedRenameIsRefusedAndMvFallsBack) {
  const RunResult renamed =
      dry_run("python3 -c \"import os; os.rename('tree', 'moved')\" 2>&1; echo done");
  ASSERT_EQ(renamed.exit_code, 0) << describe(renamed);
  if (as_root()) {
    EXPECT_EQ(renamed.out.find("Errno"), std::string::npos) << describe(renamed);
  } else {
    EXPECT_NE(renamed.out.find("[Errno 18] Invalid cross-device link"), std::string::npos)
        << describe(renamed);
  }
  ASSERT_EQ(session_command({"discard", session_id()}).exit_code, 0);

  const std::string script = "mv tree moved && echo edited >> moved/top.txt";
  const Tree want = expected(script);
  const RunResult r = dry_run(script);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const RunResult commit = session_command({"commit", session_id()});
  ASSERT_EQ(commit.exit_code, 0) << describe(commit);
  EXPECT_EQ(snapshot(project_), want);
}

JAIL_INSTANTIATE_FOR_CALLERS(DryRunRename);

}  // namespace
}  // namespace jail_test
