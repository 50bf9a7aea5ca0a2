// `jail changes ID --format patch`: a patch that `git apply` applies to a copy of the project to
// give what `jail commit` writes there, and `git apply -R` takes back; what git's format cannot
// hold is named on stderr, and the patch's raw bytes never go to a terminal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../support/shell_quote.hpp"
#include "dry_run_fixture.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

constexpr const char* kNotInPatch = "jail: not in the patch: ";

// 80 KiB that deflate cannot shrink much (its base85 runs to many lines), all 256 byte values
// first.
std::string binary_payload() {
  std::string bytes;
  for (int value = 0; value < 256; ++value) bytes += static_cast<char>(value);
  std::uint32_t state = 12345;
  while (bytes.size() < 80 * 1024) {
    state = state * 1664525u + 1013904223u;
    bytes += static_cast<char>(state >> 24);
  }
  return bytes;
}

// The paths of the "jail: not in the patch: PATH (why)" lines.
std::set<std::string> not_in_patch(const std::string& err) {
  std::set<std::string> paths;
  for (const std::string& line : split_lines(err)) {
    if (!line.starts_with(kNotInPatch)) continue;
    const std::string rest = line.substr(std::string(kNotInPatch).size());
    paths.insert(rest.substr(0, rest.find(" (")));
  }
  return paths;
}

// Each path where the trees differ, but those in `except`, with both sides cut short: a file's
// 80 KiB printed whole would bury the difference.
std::string differences(const Tree& left, const Tree& right, const std::set<std::string>& except) {
  std::set<std::string> paths;
  for (const auto& [path, entry] : left) paths.insert(path);
  for (const auto& [path, entry] : right) paths.insert(path);
  auto shown = [](const Tree& tree, const std::string& path) {
    const auto found = tree.find(path);
    if (found == tree.end()) return std::string("<absent>");
    return found->second.size() > 80 ? found->second.substr(0, 80) + "…" : found->second;
  };
  std::ostringstream out;
  for (const std::string& path : paths) {
    const auto l = left.find(path), r = right.find(path);
    if (except.count(path) != 0 || (l != left.end() && r != right.end() && l->second == r->second))
      continue;
    out << path << ":\n  " << shown(left, path) << "\n  " << shown(right, path) << "\n";
  }
  return out.str();
}

// `git apply` of `patch` in `dir`, with nobody's configuration, umask 022 and no repository
// around: its output, then "exit=N".
std::string git_apply(const std::string& dir, const std::string& patch, bool reverse) {
  return shell_output("cd " + shell_quote(dir) +
                      " && umask 022 && GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 "
                      "GIT_CEILING_DIRECTORIES=/var/tmp git apply --binary " +
                      (reverse ? "-R " : "") + shell_quote(patch) + "; echo \"exit=$?\"");
}

std::string blob_id(const std::string& path) {
  return trim(shell_output("git hash-object --no-filters " + shell_quote(path)));
}

// A pseudo-terminal to hand jail as its stdout; what reached it is read back.
class Terminal {
 public:
  Terminal() {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) return;
    slave_ = ::open(::ptsname(master_), O_RDWR | O_NOCTTY | O_CLOEXEC);
    ::fcntl(master_, F_SETFL, O_NONBLOCK);
  }
  ~Terminal() {
    if (slave_ >= 0) ::close(slave_);
    if (master_ >= 0) ::close(master_);
  }
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  [[nodiscard]] bool ok() const { return slave_ >= 0; }
  [[nodiscard]] int slave() const { return slave_; }
  std::string drain() {
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = ::read(master_, buffer, sizeof buffer)) > 0;)
      text.append(buffer, static_cast<std::size_t>(n));
    return text;
  }

 private:
  int master_ = -1;
  int slave_ = -1;
};

class DryRunPatch : public DryRun {
 protected:
  RunResult changes_to_terminal(const std::string& id, Terminal& terminal) {
    return run({"changes", id, "--session-dir", sessions_, "--format", "patch"},
               {.stdout_fd = terminal.slave()});
  }
};

// Every kind of change a tool makes, through the patch into a copy, against the commit itself.
TEST_P(DryRunPatch, AppliedToACopyItIsTheCommitAndDashRTakesItBack) {
  write_file(project_ + "/bin-mod.bin", binary_payload());
  write_file(project_ + "/empty-old", "");
  write_file(project_ + "/tool.sh", "#!/bin/sh\necho hi\n", 0755);
  ASSERT_EQ(::symlink("a.txt", (project_ + "/old-link").c_str()), 0);
  ASSERT_EQ(::lchown((project_ + "/old-link").c_str(), kNobodyUid, kNobodyGid), 0);
  const Tree original = snapshot(project_);
  const RunResult run = dry_run(R"sh(set -e; umask 022
    printf 'new text\nsecond line\n' > added.txt
    printf 'line1\nline2 changed\nline3\n' > a.txt
    rm del.txt
    cp bin-mod.bin added.bin && printf 'tail\000\001' >> added.bin
    printf 'more\000' >> bin-mod.bin
    : > empty-new
    rm empty-old
    chmod +x mode.txt
    chmod -x tool.sh
    ln -s a.txt link
    ln -sfn keep.txt old-link
    rm -r box
    printf '\033[31mred\033[0m no newline' > "$(printf 'we\tird"\377name')"
    mkdir empty-dir
    chmod 600 keep.txt
    ln added.txt hard-link)sh");
  ASSERT_EQ(run.exit_code, 0) << describe(run);
  const std::string id = session_id();
  const RunResult patch = session_command({"changes", id, "--format", "patch"});
  ASSERT_EQ(patch.exit_code, 0) << describe(patch);

  // Git's format, as `git diff --binary --full-index` writes it.
  const std::string& text = patch.out;
  const std::string a_old = blob_id(project_ + "/a.txt");
  EXPECT_NE(text.find("diff --git a/a.txt b/a.txt\nindex " + a_old + ".."), std::string::npos)
      << a_old << "\n"
      << describe(patch);
  EXPECT_NE(text.find("diff --git \"a/we\\tird\\\"\\377name\" \"b/we\\tird\\\"\\377name\"\n"
                      "new file mode 100644\n"),
            std::string::npos)
      << describe(patch);
  EXPECT_NE(text.find("@@ -0,0 +1 @@\n+\033[31mred\033[0m no newline\n"
                      "\\ No newline at end of file\n"),
            std::string::npos)
      << "the file's raw bytes\n"
      << describe(patch);
  EXPECT_NE(text.find("diff --git a/mode.txt b/mode.txt\nold mode 100644\nnew mode 100755\n"),
            std::string::npos)
      << describe(patch);
  EXPECT_NE(text.find("diff --git a/tool.sh b/tool.sh\nold mode 100755\nnew mode 100644\n"),
            std::string::npos)
      << describe(patch);
  EXPECT_NE(text.find("diff --git a/link b/link\nnew file mode 120000\n"), std::string::npos)
      << describe(patch);
  EXPECT_NE(text.find(" 120000\n--- a/old-link\n+++ b/old-link\n@@ -1 +1 @@\n-a.txt\n"
                      "\\ No newline at end of file\n+keep.txt\n"),
            std::string::npos)
      << describe(patch);
  EXPECT_NE(text.find("diff --git a/box/old2 b/box/old2\ndeleted file mode 100644\n"),
            std::string::npos)
      << describe(patch);
  EXPECT_NE(text.find("diff --git a/empty-new b/empty-new\nnew file mode 100644\nindex "
                      "0000000000000000000000000000000000000000..e69de29bb2d1d6434b8b29ae775ad8c2e"
                      "48c5391\ndiff --git"),
            std::string::npos)
      << describe(patch);
  EXPECT_NE(text.find("GIT binary patch\nliteral 81926\n"), std::string::npos) << describe(patch);
  const std::vector<std::string> lines = split_lines(text);
  const auto full_lines = std::count_if(lines.begin(), lines.end(), [](const std::string& line) {
    return line.size() == 66 && line[0] == 'z';  // 52 bytes in base85
  });
  EXPECT_GT(full_lines, 1500) << "the new 80 KiB file and the changed one, in base85 lines";

  // What the patch cannot hold, named; no drift, there was none.
  const std::set<std::string> expected = {project_ + "/empty-dir/", project_ + "/keep.txt",
                                          project_ + "/hard-link"};
  EXPECT_EQ(not_in_patch(patch.err), expected) << describe(patch);
  EXPECT_EQ(patch.err.find("on the host since"), std::string::npos) << describe(patch);
  EXPECT_NE(patch.err.find("jail: change set sha256:"), std::string::npos) << describe(patch);
  std::set<std::string> except;
  for (std::string path : expected) {
    path = path.substr(project_.size() + 1);
    if (path.ends_with('/')) path.pop_back();
    except.insert(path);
  }

  TempDir scratch;
  const std::string patch_file = scratch / "changes.patch";
  {
    std::ofstream out(patch_file, std::ios::binary);
    out << text;
    ASSERT_TRUE(out.good());
  }
  const std::string copy = scratch / "copy";
  ASSERT_EQ(trim(shell_output("cp -a " + shell_quote(project_) + " " + shell_quote(copy) +
                              " && echo copied")),
            "copied");
  const std::string applied = git_apply(copy, patch_file, false);
  ASSERT_TRUE(applied.ends_with("exit=0\n")) << applied;

  const RunResult commit = session_command({"commit", id});
  ASSERT_EQ(commit.exit_code, 0) << describe(commit);
  const Tree committed = snapshot(project_);
  ASSERT_EQ(committed.count("added.bin"), 1u) << "the commit wrote nothing";
  EXPECT_EQ(differences(committed, snapshot(copy), except), "");
  EXPECT_NE(differences(committed, original, except), "") << "the commit changed nothing";

  // Taken back: the committed tree, patched in reverse, is the original.
  const std::string reversed = scratch / "reversed";
  ASSERT_EQ(trim(shell_output("cp -a " + shell_quote(project_) + " " + shell_quote(reversed) +
                              " && echo copied")),
            "copied");
  const std::string undone = git_apply(reversed, patch_file, true);
  ASSERT_TRUE(undone.ends_with("exit=0\n")) << undone;
  EXPECT_EQ(differences(original, snapshot(reversed), except), "");
}

// With two bound directories each path starts with its bind's host directory (less the "/"), so
// the patch applies from / or in a copy of both; a directory the changes empty is named, since
// `git apply` removes it and the commit keeps it.
TEST_P(DryRunPatch, SeveralBindsApplyFromTheRoot) {
  const std::string other = cwd_ / "other";
  ASSERT_EQ(::mkdir(other.c_str(), 0755), 0);
  ASSERT_EQ(::chown(other.c_str(), kNobodyUid, kNobodyGid), 0);
  write_file(other + "/o.txt", "other\n");
  ASSERT_EQ(::mkdir((project_ + "/sub").c_str(), 0755), 0);
  ASSERT_EQ(::chown((project_ + "/sub").c_str(), kNobodyUid, kNobodyGid), 0);
  write_file(project_ + "/sub/only", "the only one\n");
  const RunResult dry =
      run({"--dry-run", "--session-dir", sessions_, "--bind", other + ":/other", "--", "sh", "-c",
           "echo more >> a.txt && echo more >> /other/o.txt && rm sub/only"},
          {.cwd = project_});
  ASSERT_EQ(dry.exit_code, 0) << describe(dry);
  const std::string id = session_id();
  const RunResult patch = session_command({"changes", id, "--format", "patch"});
  ASSERT_EQ(patch.exit_code, 0) << describe(patch);
  for (const std::string& path : {project_ + "/a.txt", other + "/o.txt", project_ + "/sub/only"}) {
    const std::string relative = path.substr(1);
    EXPECT_NE(patch.out.find("diff --git a/" + relative + " b/" + relative + "\n"),
              std::string::npos)
        << describe(patch);
  }
  EXPECT_EQ(not_in_patch(patch.err), std::set<std::string>{project_ + "/sub/"}) << describe(patch);

  TempDir scratch;
  const std::string patch_file = scratch / "changes.patch";
  {
    std::ofstream out(patch_file, std::ios::binary);
    out << patch.out;
    ASSERT_TRUE(out.good());
  }
  const std::string root = scratch / "root";
  // Both binds live in cwd_: copied to the same place below `root`.
  ASSERT_EQ(trim(shell_output("mkdir -p " + shell_quote(root + cwd_.path()) + " && cp -a " +
                              shell_quote(project_) + " " + shell_quote(other) + " " +
                              shell_quote(root + cwd_.path()) + " && echo copied")),
            "copied");
  const std::string applied = git_apply(root, patch_file, false);
  ASSERT_TRUE(applied.ends_with("exit=0\n")) << applied;
  ASSERT_EQ(session_command({"commit", id}).exit_code, 0);
  const Tree committed = snapshot(project_);
  ASSERT_EQ(committed.count("sub"), 1u);
  EXPECT_EQ(differences(committed, snapshot(root + project_), {"sub"}), "");
  EXPECT_EQ(snapshot(root + project_).count("sub"), 0u) << "git apply kept the emptied directory";
  EXPECT_EQ(read_file(root + other + "/o.txt"), "other\nmore\n");
  EXPECT_EQ(differences(snapshot(other), snapshot(root + other), {}), "");
}

// The patch's old side is the host's copy now; one changed since the run is said.
TEST_P(DryRunPatch, AnOldSideChangedOnTheHostIsSaid) {
  ASSERT_EQ(dry_run("printf 'line1\\nline2\\nline3\\n' > a.txt && rm -r box").exit_code, 0);
  const std::string id = session_id();
  const RunResult before = session_command({"changes", id, "--format", "patch"});
  ASSERT_EQ(before.exit_code, 0) << describe(before);
  EXPECT_EQ(before.err.find("on the host since"), std::string::npos) << describe(before);

  write_file(project_ + "/a.txt", "host line\n");
  write_file(project_ + "/box/old3", "made on the host\n");
  const RunResult after = session_command({"changes", id, "--format", "patch"});
  ASSERT_EQ(after.exit_code, 0) << describe(after);
  EXPECT_NE(after.err.find(project_ + "/a.txt (changed on the host since)"), std::string::npos)
      << describe(after);
  EXPECT_NE(after.err.find(project_ + "/box/old3 (created on the host since"), std::string::npos)
      << describe(after);
  EXPECT_NE(after.out.find("-host line\n"), std::string::npos) << describe(after);
  EXPECT_NE(after.out.find("diff --git a/box/old3 b/box/old3\ndeleted file mode 100644\n"),
            std::string::npos)
      << describe(after);
}

// The tool's bytes, escape sequences and all, never reach a terminal: the patch is refused there.
TEST_P(DryRunPatch, ATerminalIsRefusedThePatch) {
  ASSERT_EQ(dry_run("printf 'seen\\n\\033[2J\\033[1Acleared\\n' > a.txt").exit_code, 0);
  const std::string id = session_id();
  Terminal terminal;
  ASSERT_TRUE(terminal.ok());
  const RunResult refused = changes_to_terminal(id, terminal);
  EXPECT_EQ(refused.exit_code, 2) << describe(refused);
  EXPECT_NE(refused.err.find("jail changes --format patch: stdout is a terminal; the patch holds "
                             "the files' raw bytes (escape sequences included): send it to a file "
                             "(> changes.patch) or to `git apply`"),
            std::string::npos)
      << describe(refused);
  EXPECT_EQ(terminal.drain(), "") << "bytes reached the terminal";

  // The same command into a pipe: the raw bytes the terminal was spared.
  const RunResult piped = session_command({"changes", id, "--format", "patch"});
  EXPECT_EQ(piped.exit_code, 0) << describe(piped);
  EXPECT_NE(piped.out.find("+\033[2J\033[1Acleared\n"), std::string::npos) << describe(piped);
}

// One format at a time; --patch is still the human review, escaped.
TEST_P(DryRunPatch, FormatsAreOneAtATime) {
  ASSERT_EQ(dry_run("printf 'x\\033[2Jy\\n' > a.txt").exit_code, 0);
  const std::string id = session_id();
  for (const std::vector<std::string>& flags :
       std::vector<std::vector<std::string>>{{"--format", "patch", "--stat"},
                                             {"--format", "review", "--json"},
                                             {"--stat", "--digest"},
                                             {"--patch", "--format", "patch"},
                                             {"--format", "diff"}}) {
    std::vector<std::string> args = {"changes", id};
    args.insert(args.end(), flags.begin(), flags.end());
    const RunResult r = session_command(args);
    EXPECT_EQ(r.exit_code, 2) << flags.front() << " " << flags.at(1) << "\n" << describe(r);
    EXPECT_EQ(r.out, "") << describe(r);
  }
  const RunResult review = session_command({"changes", id});
  ASSERT_EQ(review.exit_code, 0) << describe(review);
  EXPECT_NE(review.out.find("+x\\x1b[2Jy"), std::string::npos) << describe(review);
  EXPECT_EQ(review.out.find('\033'), std::string::npos) << describe(review);
  for (const std::vector<std::string>& same : std::vector<std::vector<std::string>>{
           {"--patch"}, {"--format", "review"}, {"--patch", "--format", "review"}}) {
    std::vector<std::string> args = {"changes", id};
    args.insert(args.end(), same.begin(), same.end());
    const RunResult r = session_command(args);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_EQ(r.out, review.out) << same.front();
  }
  const RunResult stat = session_command({"changes", id, "--format", "stat"});
  EXPECT_EQ(stat.exit_code, 0) << describe(stat);
  EXPECT_EQ(stat.out, session_command({"changes", id, "--stat"}).out);
  EXPECT_NE(stat.out.find("M " + project_ + "/a.txt"), std::string::npos) << describe(stat);
  const RunResult digest = session_command({"changes", id, "--format", "digest"});
  EXPECT_TRUE(digest.out.starts_with("sha256:")) << describe(digest);
}

JAIL_INSTANTIATE_FOR_CALLERS(DryRunPatch);

}  // namespace
}  // namespace jail_test
