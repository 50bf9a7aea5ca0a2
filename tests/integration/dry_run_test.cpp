// --dry-run and the session commands: the tool's writes to a bound project land in a session,
// the host stays as it was, `jail changes` shows exactly what changed, `jail commit` applies it
// byte-exact (refusing drift, rolling back a failure, never writing outside the directory),
// `jail undo` restores, `jail discard` removes. Run as root and as an unprivileged caller.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "../support/shell_quote.hpp"
#include "dry_run_fixture.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

namespace fs = std::filesystem;

// What the tool does to the project: edit, create, delete, rename, chmod, mkdir, symlink, and
// empty a directory and refill it (an opaque directory in the upper layer).
constexpr const char* kEdits =
    "printf 'line1\\nchanged\\n' > a.txt && echo new > new.txt && rm del.txt && "
    "mv keep.txt renamed.txt && chmod 600 mode.txt && mkdir -p nd/deeper && "
    "echo deep > nd/deeper/f && ln -s a.txt link && rm -r box && mkdir box && "
    "echo fresh > box/fresh && cat a.txt";

// The tool's view after the edits, which a commit must reproduce on the host.
Tree expected_after(Tree tree) {
  const std::string a = "file 0644 line1\nchanged\n";
  tree["a.txt"] = a;
  tree["new.txt"] = "file 0644 new\n";
  tree.erase("del.txt");
  tree["renamed.txt"] = tree["keep.txt"];
  tree.erase("keep.txt");
  tree["mode.txt"] = "file 0600 mode\n";
  tree["nd"] = "dir 0755";
  tree["nd/deeper"] = "dir 0755";
  tree["nd/deeper/f"] = "file 0644 deep\n";
  tree["link"] = "symlink -> a.txt";
  tree.erase("box/old1");
  tree.erase("box/old2");
  tree["box/fresh"] = "file 0644 fresh\n";
  return tree;
}

TEST_P(DryRun, HostUnchangedAndChangesListedExactly) {
  const RunResult r = dry_run(kEdits);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "line1\nchanged\n") << "the tool sees its own writes\n" << describe(r);
  EXPECT_EQ(snapshot(project_), before_) << "the host must see none of the tool's writes";
  EXPECT_NE(r.err.find("dry run: the host is unchanged"), std::string::npos) << describe(r);

  const std::string id = session_id();
  EXPECT_NE(r.err.find(id), std::string::npos) << "the summary names the session\n" << describe(r);
  const std::map<std::string, std::string> expected = {
      {"a.txt", "modified file"},    {"new.txt", "added file"},
      {"del.txt", "deleted file"},   {"keep.txt", "deleted file"},
      {"renamed.txt", "added file"}, {"mode.txt", "mode_changed file"},
      {"nd", "added directory"},     {"nd/deeper", "added directory"},
      {"nd/deeper/f", "added file"}, {"link", "added symlink"},
      {"box/old1", "deleted file"},  {"box/old2", "deleted file"},
      {"box/fresh", "added file"}};
  EXPECT_EQ(changes_by_path(id), expected);

  const RunResult patch = session_command({"changes", id, "--patch"});
  EXPECT_EQ(patch.exit_code, 0) << describe(patch);
  EXPECT_NE(patch.out.find("-line2\n+changed\n"), std::string::npos) << describe(patch);
  EXPECT_NE(patch.out.find("new symlink " + project_ + "/link -> a.txt"), std::string::npos)
      << describe(patch);
  EXPECT_NE(patch.out.find("mode " + project_ + "/mode.txt 0644 -> 0600"), std::string::npos)
      << describe(patch);
}

TEST_P(DryRun, CommitAppliesByteExactAndUndoRestores) {
  ASSERT_EQ(dry_run(kEdits).exit_code, 0);
  const std::string id = session_id();
  const RunResult commit = session_command({"commit", id});
  ASSERT_EQ(commit.exit_code, 0) << describe(commit);
  EXPECT_EQ(snapshot(project_), expected_after(before_));
  EXPECT_EQ(changes_by_path(id), (std::map<std::string, std::string>{}))
      << "after a commit the host matches the session";

  const RunResult again = session_command({"commit", id});
  EXPECT_EQ(again.exit_code, 1) << "a session is committed once\n" << describe(again);

  const RunResult undo = session_command({"undo", id});
  ASSERT_EQ(undo.exit_code, 0) << describe(undo);
  EXPECT_EQ(snapshot(project_), before_) << "undo restores every path, mode and content";
}

TEST_P(DryRun, CommitOfSomePathsOnly) {
  ASSERT_EQ(dry_run(kEdits).exit_code, 0);
  const std::string id = session_id();
  const RunResult commit =
      session_command({"commit", id, project_ + "/nd/deeper/f", project_ + "/a.txt"});
  ASSERT_EQ(commit.exit_code, 0) << describe(commit);
  Tree expected = before_;
  expected["a.txt"] = "file 0644 line1\nchanged\n";
  expected["nd"] = "dir 0755";
  expected["nd/deeper"] = "dir 0755";
  expected["nd/deeper/f"] = "file 0644 deep\n";
  EXPECT_EQ(snapshot(project_), expected)
      << "only the paths asked for, and the directories on the way";
  // The rest: a session commits once, and the refusal says how to have the others too.
  const RunResult rest = session_command({"commit", id, project_ + "/new.txt"});
  EXPECT_EQ(rest.exit_code, 1) << describe(rest);
  EXPECT_NE(rest.err.find("committed in part"), std::string::npos) << describe(rest);
  EXPECT_NE(rest.err.find("jail undo --session-dir " + sessions_ + " " + id), std::string::npos)
      << describe(rest);
}

TEST_P(DryRun, DriftIsRefusedUnlessForced) {
  ASSERT_EQ(dry_run(kEdits).exit_code, 0);
  const std::string id = session_id();
  write_file(project_ + "/a.txt", "edited on the host meanwhile\n");
  write_file(project_ + "/new.txt", "created on the host meanwhile\n");
  Tree drifted = snapshot(project_);

  const RunResult refused = session_command({"commit", id});
  EXPECT_EQ(refused.exit_code, 1) << describe(refused);
  EXPECT_NE(refused.err.find(project_ + "/a.txt (changed on the host since)"), std::string::npos)
      << describe(refused);
  EXPECT_NE(refused.err.find(project_ + "/new.txt (created on the host since)"), std::string::npos)
      << describe(refused);
  EXPECT_EQ(snapshot(project_), drifted) << "nothing applied when drift is found";

  const RunResult forced = session_command({"commit", id, "--force"});
  ASSERT_EQ(forced.exit_code, 0) << describe(forced);
  EXPECT_EQ(snapshot(project_), expected_after(before_));
}

TEST_P(DryRun, FailureMidwayRollsBackFully) {
  // "a.txt" comes before "zz/new" in path order: it is applied, then zz/new fails.
  ASSERT_EQ(::mkdir((project_ + "/zz").c_str(), 0755), 0);
  ASSERT_EQ(::chown((project_ + "/zz").c_str(), kNobodyUid, kNobodyGid), 0);
  before_ = snapshot(project_);
  ASSERT_EQ(dry_run("echo changed > a.txt && rm del.txt && echo x > zz/new").exit_code, 0);
  const std::string id = session_id();
  set_immutable(project_ + "/zz", true);
  const RunResult commit = session_command({"commit", id});
  set_immutable(project_ + "/zz", false);
  EXPECT_EQ(commit.exit_code, 1) << describe(commit);
  EXPECT_NE(commit.err.find("rolled back"), std::string::npos) << describe(commit);
  EXPECT_EQ(snapshot(project_), before_) << "the host is exactly as before the commit";
  EXPECT_EQ(changes_by_path(id).size(), 3u) << "the session stays, with all its changes";

  const RunResult retry = session_command({"commit", id});
  ASSERT_EQ(retry.exit_code, 0) << describe(retry);
  EXPECT_EQ(read_file(project_ + "/zz/new"), "x\n");
}

TEST_P(DryRun, MaliciousChangeSetCannotWriteOutside) {
  TempDir outside;
  ASSERT_EQ(::mkdir((project_ + "/sub").c_str(), 0755), 0);
  ASSERT_EQ(::chown((project_ + "/sub").c_str(), kNobodyUid, kNobodyGid), 0);
  ASSERT_EQ(dry_run("echo payload > sub/victim && ln -s /etc/passwd pw").exit_code, 0);
  const std::string id = session_id();

  // After the run, the host's sub/ becomes a symlink to a directory outside the project: the
  // change set no longer matches what was recorded, and nothing may be written through it.
  fs::remove_all(project_ + "/sub");
  fs::create_directory_symlink(outside.path(), project_ + "/sub");
  const Tree outside_before = snapshot(outside.path());
  const RunResult through_link = session_command({"commit", id, "--force"});
  EXPECT_EQ(through_link.exit_code, 1) << describe(through_link);
  EXPECT_EQ(snapshot(outside.path()), outside_before) << "nothing written through the symlink";
  EXPECT_FALSE(fs::exists(outside / "victim"));
  EXPECT_TRUE(fs::is_symlink(project_ + "/sub")) << "the host's own symlink stays";
  EXPECT_FALSE(fs::exists(fs::symlink_status(project_ + "/pw"))) << "no part of the commit applied";

  // A device node and a file put into the session's layer after the run are refused outright.
  const std::string upper = sessions_ + "/" + id + "/layers/0/upper";
  ASSERT_EQ(::mknod((upper + "/dev_null_copy").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  write_file(upper + "/smuggled", "not from the run\n");
  fs::remove(project_ + "/sub");
  ASSERT_TRUE(fs::create_directory(project_ + "/sub"));
  const RunResult tampered = session_command({"commit", id, "--force"});
  EXPECT_EQ(tampered.exit_code, 1) << describe(tampered);
  EXPECT_NE(tampered.err.find("dev_null_copy: a device, fifo or socket"), std::string::npos)
      << describe(tampered);
  EXPECT_NE(tampered.err.find("smuggled: not a change when the run ended"), std::string::npos)
      << describe(tampered);
  EXPECT_FALSE(fs::exists(project_ + "/dev_null_copy"));
  EXPECT_FALSE(fs::exists(project_ + "/smuggled"));

  // A session id is a name, never a path.
  const RunResult traversal = session_command({"commit", "../" + id});
  EXPECT_EQ(traversal.exit_code, 1) << describe(traversal);
  EXPECT_NE(traversal.err.find("is not a session id"), std::string::npos) << describe(traversal);
}

// A --bind inside the current directory (or one directory twice) gives the tool two layers over
// the same files; a commit applied the current directory first and then wrote the bind's layer
// through the symlink the tool had put in its place — anywhere on the host.
TEST_P(DryRun, OverlappingWritableLayersAreRefused) {
  TempDir outside;
  ASSERT_EQ(::mkdir((project_ + "/build").c_str(), 0755), 0);
  ASSERT_EQ(::chown((project_ + "/build").c_str(), kNobodyUid, kNobodyGid), 0);
  RunOptions options;
  options.cwd = project_;
  const RunResult nested =
      run({"--dry-run", "--session-dir", sessions_, "--bind", project_ + "/build:/out", "--", "sh",
           "-c", "echo pwned > /out/target; rmdir build; ln -s " + outside.path() + " build"},
          options);
  EXPECT_EQ(nested.exit_code, 125) << describe(nested);
  EXPECT_NE(nested.err.find("one is inside the other"), std::string::npos) << describe(nested);
  EXPECT_TRUE(fs::is_empty(sessions_)) << "a refused dry run leaves no session";
  EXPECT_TRUE(fs::is_empty(outside.path()));

  // The root of a layer that is a symlink by the time of the commit is not written through.
  options.cwd = cwd_.path();
  const RunResult bound = run({"--dry-run", "--session-dir", sessions_, "--no-cwd", "--bind",
                               project_ + "/build:/out", "--", "sh", "-c", "echo x > /out/f"},
                              options);
  ASSERT_EQ(bound.exit_code, 0) << describe(bound);
  fs::rename(project_ + "/build", project_ + "/build.real");
  fs::create_directory_symlink(outside.path(), project_ + "/build");
  const RunResult commit = session_command({"commit", session_id(), "--force"});
  EXPECT_EQ(commit.exit_code, 1) << describe(commit);
  EXPECT_NE(commit.err.find("a symlink on the way"), std::string::npos) << describe(commit);
  EXPECT_TRUE(fs::is_empty(outside.path())) << "written through the symlinked layer root";
}

// A mode change of a file with another name (a hard link from outside the project) changes only
// the project's name, as the tool's copy-on-write layer did; and a set-uid or set-gid bit the
// tool set is never committed: the commit's file would be the directory owner's (root's, here
// as often), a root program the tool wrote.
TEST_P(DryRun, CommitTouchesOnlyTheProjectsNameAndNoSetIdBit) {
  TempDir store;
  write_file(store.path() + "/blob", "shared\n", 0600);
  ASSERT_EQ(::chown((store.path() + "/blob").c_str(), kNobodyUid, kNobodyGid), 0);
  ASSERT_EQ(::link((store.path() + "/blob").c_str(), (project_ + "/link").c_str()), 0);
  // The root caller's tool runs as nobody on the host and may create files in the project only
  // if it owns it; a set-uid file of its own is what the policy would refuse, so no policy here.
  RunOptions options;
  options.cwd = project_;
  const RunResult r = run({"--dry-run", "--session-dir", sessions_, "--policy", "none", "--", "sh",
                           "-c", "chmod 666 link && cp /usr/bin/id evil && chmod 6755 evil"},
                          options);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const std::string id = session_id();
  const RunResult listed = session_command({"changes", id, "--json"});
  ASSERT_EQ(listed.exit_code, 0) << describe(listed);
  for (const auto& change : nlohmann::json::parse(listed.out)) {
    if (change.at("relative") == "evil") {
      EXPECT_EQ(change.at("new").at("mode").get<std::string>(), "0755") << listed.out;
    }
  }
  const RunResult commit = session_command({"commit", id});
  ASSERT_EQ(commit.exit_code, 0) << describe(commit);
  struct stat evil {};
  ASSERT_EQ(::lstat((project_ + "/evil").c_str(), &evil), 0);
  EXPECT_EQ(evil.st_mode & 07777, 0755u) << "the set-id bits were committed";
  struct stat blob {
  }, link{};
  ASSERT_EQ(::lstat((store.path() + "/blob").c_str(), &blob), 0);
  ASSERT_EQ(::lstat((project_ + "/link").c_str(), &link), 0);
  EXPECT_EQ(blob.st_mode & 07777, 0600u) << "the chmod reached the name outside the project";
  EXPECT_EQ(link.st_mode & 07777, 0666u);
  EXPECT_NE(blob.st_ino, link.st_ino);
  EXPECT_EQ(read_file(project_ + "/link"), "shared\n");
}

// Sessions decide what a commit writes: one that someone else could change is refused, and the
// names the tool chose are printed with their control characters escaped (an escape sequence
// in one could erase the lines above it on a terminal).
TEST_P(DryRun, SessionsAreTheCallersAloneAndNamesPrintSafely) {
  ASSERT_EQ(
      dry_run("echo hidden > .git-hook && touch \"$(printf 'x\\033[2K\\033[1Ay')\"").exit_code, 0);
  const std::string id = session_id();
  const RunResult stat = session_command({"changes", id, "--stat"});
  ASSERT_EQ(stat.exit_code, 0) << describe(stat);
  EXPECT_EQ(stat.out.find('\033'), std::string::npos) << describe(stat);
  EXPECT_NE(stat.out.find("x\\x1b[2K\\x1b[1Ay"), std::string::npos) << describe(stat);
  ASSERT_EQ(::chmod(sessions_.c_str(), 0777), 0);
  const RunResult shared = session_command({"commit", id});
  ASSERT_EQ(::chmod(sessions_.c_str(), 0700), 0);
  EXPECT_EQ(shared.exit_code, 1) << describe(shared);
  EXPECT_NE(shared.err.find("is writable by others"), std::string::npos) << describe(shared);
  EXPECT_FALSE(fs::exists(project_ + "/.git-hook")) << "committed from a shared session dir";

  // A C1 control in UTF-8 (CSI, which terminals take as ESC [) was printed raw, and a name with
  // a line break printed as one spelled with a backslash did.
  ASSERT_EQ(session_command({"discard", id}).exit_code, 0);
  ASSERT_EQ(dry_run("touch \"$(printf 'c1\\302\\233x')\" \"$(printf 'nl\\nname')\" 'nl\\x0aname'")
                .exit_code,
            0);
  const std::string second = session_id();
  const RunResult more = session_command({"changes", second, "--stat"});
  EXPECT_NE(more.out.find("c1\\xc2\\x9bx"), std::string::npos) << describe(more);
  EXPECT_NE(more.out.find("nl\\x0aname"), std::string::npos) << describe(more);
  EXPECT_NE(more.out.find("nl\\\\x0aname"), std::string::npos) << describe(more);
}

// A commit killed midway leaves the backups of what it replaced in the session's undo/: the next
// commit must not clear them (they are the only copy), and two commits of one session never run
// at once (each would back up what the other had written).
TEST_P(DryRun, AnInterruptedCommitsBackupsAreKeptAndCommitsDoNotOverlap) {
  ASSERT_EQ(dry_run("echo new > a.txt").exit_code, 0);
  const std::string id = session_id();
  const std::string session = sessions_ + "/" + id;
  const uid_t owner = as_root() ? 0 : kNobodyUid;

  {
    // Another commit holds the session.
    const int fd = ::open(session.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::flock(fd, LOCK_EX), 0);
    const RunResult busy = session_command({"commit", id});
    ::close(fd);
    EXPECT_EQ(busy.exit_code, 1) << describe(busy);
    EXPECT_NE(busy.err.find("is running"), std::string::npos) << describe(busy);
    EXPECT_EQ(read_file(project_ + "/a.txt"), "line1\nline2\n");
  }

  // What a commit killed after backing up a.txt leaves.
  ASSERT_EQ(::mkdir((session + "/undo").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((session + "/undo/backups").c_str(), 0700), 0);
  write_file(session + "/undo/backups/0", "the only copy\n");
  for (const char* path : {"/undo", "/undo/backups", "/undo/backups/0"})
    ASSERT_EQ(::chown((session + path).c_str(), owner, owner == 0 ? 0 : kNobodyGid), 0);
  const RunResult again = session_command({"commit", id});
  EXPECT_EQ(again.exit_code, 1) << describe(again);
  EXPECT_NE(again.err.find("did not finish"), std::string::npos) << describe(again);
  EXPECT_EQ(read_file(session + "/undo/backups/0"), "the only copy\n");
  EXPECT_EQ(read_file(project_ + "/a.txt"), "line1\nline2\n");
}

// A directory the tool deleted is deleted with everything in it: a file edited or added below
// it on the host after the run began is drift, not silently removed by the commit.
TEST_P(DryRun, DriftBelowADeletedDirectoryIsRefused) {
  ASSERT_EQ(::mkdir((project_ + "/box/sub").c_str(), 0755), 0);
  ASSERT_EQ(::chown((project_ + "/box/sub").c_str(), kNobodyUid, kNobodyGid), 0);
  write_file(project_ + "/box/sub/notes", "mine\n");
  ASSERT_EQ(dry_run("rm -r box").exit_code, 0);
  const std::string id = session_id();
  write_file(project_ + "/box/sub/notes", "edited on the host\n");
  const RunResult edited = session_command({"commit", id});
  EXPECT_EQ(edited.exit_code, 1) << describe(edited);
  EXPECT_NE(edited.err.find("box/sub/notes (changed on the host since"), std::string::npos)
      << describe(edited);
  EXPECT_EQ(read_file(project_ + "/box/sub/notes"), "edited on the host\n");

  write_file(project_ + "/box/sub/notes", "mine\n");  // back as it was, but for its time
  write_file(project_ + "/box/sub/added", "new on the host\n");
  const RunResult added = session_command({"commit", id});
  EXPECT_EQ(added.exit_code, 1) << describe(added);
  EXPECT_NE(added.err.find("box/sub/added (created on the host since"), std::string::npos)
      << describe(added);
  EXPECT_TRUE(fs::exists(project_ + "/box/sub/added"));

  const RunResult forced = session_command({"commit", id, "--force"});
  EXPECT_EQ(forced.exit_code, 0) << describe(forced);
  EXPECT_FALSE(fs::exists(project_ + "/box"));
}

// A directory the tool left read-only, with files in it, commits: its mode is set after what
// goes in it is written (a caller other than root could not write into it before).
TEST_P(DryRun, ReadOnlyDirectoriesCommitWithTheirContent) {
  ASSERT_EQ(dry_run("mkdir -p ro/inner && echo a > ro/inner/f && echo b > ro/g && "
                    "chmod 0555 ro/inner ro && chmod 0555 box")
                .exit_code,
            0);
  const std::string id = session_id();
  const RunResult commit = session_command({"commit", id});
  ASSERT_EQ(commit.exit_code, 0) << describe(commit);
  EXPECT_EQ(read_file(project_ + "/ro/inner/f"), "a\n");
  EXPECT_EQ(read_file(project_ + "/ro/g"), "b\n");
  for (const char* dir : {"/ro", "/ro/inner", "/box"}) {
    struct stat info {};
    ASSERT_EQ(::lstat((project_ + dir).c_str(), &info), 0) << dir;
    EXPECT_EQ(info.st_mode & 07777, 0555u) << dir;
  }
  for (const char* dir : {"/ro/inner", "/ro", "/box"}) ::chmod((project_ + dir).c_str(), 0755);
}

// A file name (or an argument) that is not UTF-8 is recorded exactly: the session could not be
// written or committed ("internal error"), its JSON being UTF-8 only.
// An overlong form (C0 80) passed a loose UTF-8 check, and nlohmann then refused to write the
// manifest: the session stayed unfinished and could never be committed.
TEST_P(DryRun, NamesThatAreNotUtf8AreCommittedExactly) {
  const std::string name = "bad\xffname";
  ASSERT_EQ(dry_run("touch \"$(printf 'bad\\377name')\" \"$(printf 'over\\300\\200long')\" && "
                    ": '\xfe'")
                .exit_code,
            0);
  const std::string id = session_id();
  const RunResult listed = session_command({"changes", id, "--json"});
  EXPECT_EQ(listed.exit_code, 0) << describe(listed);
  // As the manifest keeps it: its bytes in hex (it came out with U+FFFD for the bad byte).
  bool found = false;
  for (const auto& change : nlohmann::json::parse(listed.out)) {
    found = found || change.at("relative") == nlohmann::json{{"hex", "626164ff6e616d65"}};
  }
  EXPECT_TRUE(found) << listed.out;
  found = false;
  for (const auto& change : nlohmann::json::parse(listed.out)) {
    found = found || change.at("relative") == nlohmann::json{{"hex", "6f766572c0806c6f6e67"}};
  }
  EXPECT_TRUE(found) << listed.out;
  const RunResult commit = session_command({"commit", id});
  ASSERT_EQ(commit.exit_code, 0) << describe(commit);
  EXPECT_TRUE(fs::exists(project_ + "/" + name));
  EXPECT_TRUE(fs::exists(project_ + "/over\xc0\x80long"));
  const RunResult undo = session_command({"undo", id});
  EXPECT_EQ(undo.exit_code, 0) << describe(undo);
  EXPECT_FALSE(fs::exists(project_ + "/" + name));
}

// A file the tool replaced with a filled directory commits and undoes: the path inside it was
// refused as drift ("its directory is gone"), whatever the host did, and only --force passed.
TEST_P(DryRun, AFileReplacedByAFilledDirectoryCommits) {
  ASSERT_EQ(dry_run("rm keep.txt && mkdir keep.txt && echo inside > keep.txt/x").exit_code, 0);
  const std::string id = session_id();
  const RunResult commit = session_command({"commit", id});
  ASSERT_EQ(commit.exit_code, 0) << describe(commit);
  EXPECT_EQ(read_file(project_ + "/keep.txt/x"), "inside\n");
  const RunResult undo = session_command({"undo", id});
  ASSERT_EQ(undo.exit_code, 0) << describe(undo);
  EXPECT_EQ(snapshot(project_), before_);
}

// A path given to commit names that entry: a symlink among the changes was resolved on the host
// (the change to the file it pointed to was committed instead, and the link's own was "not
// among the changes"), and "sub/", as a shell completes a directory, was not found.
TEST_P(DryRun, CommitPathsNameTheEntryItselfWithOrWithoutASlash) {
  ASSERT_EQ(::symlink("a.txt", (project_ + "/L").c_str()), 0);
  ASSERT_EQ(::lchown((project_ + "/L").c_str(), kNobodyUid, kNobodyGid), 0);
  before_ = snapshot(project_);
  ASSERT_EQ(
      dry_run("echo changed > a.txt; rm L; echo real > L; mkdir sub; echo 1 > sub/f").exit_code, 0);
  const std::string id = session_id();
  RunOptions in_project;
  in_project.cwd = project_;
  const RunResult commit = run({"commit", "--session-dir", sessions_, id, "L", "sub/"}, in_project);
  ASSERT_EQ(commit.exit_code, 0) << describe(commit);
  Tree expected = before_;
  expected["L"] = "file 0644 real\n";
  expected["sub"] = "dir 0755";
  expected["sub/f"] = "file 0644 1\n";
  EXPECT_EQ(snapshot(project_), expected) << "L itself and sub, and a.txt left as it was";
}

// The bound directory asked for through a symlink to it (~/proj -> /srv/proj, or $PWD after a
// cd through one): its last name was kept unresolved, and the commit said "not among the changes".
TEST_P(DryRun, CommitOfTheBoundDirectoryThroughASymlinkToIt) {
  ASSERT_EQ(dry_run("echo new > new.txt").exit_code, 0);
  const std::string id = session_id();
  const std::string link = cwd_ / "project-link";
  ASSERT_EQ(::symlink(project_.c_str(), link.c_str()), 0);
  const RunResult commit = session_command({"commit", id, link});
  ASSERT_EQ(commit.exit_code, 0) << describe(commit);
  Tree expected = before_;
  expected["new.txt"] = "file 0644 new\n";
  EXPECT_EQ(snapshot(project_), expected);
}

TEST_P(DryRun, SessionsListsAndDiscardRemoves) {
  ASSERT_EQ(dry_run("echo new > new.txt").exit_code, 0);
  const std::string id = session_id();
  const RunResult list = run({"sessions", "--session-dir", sessions_});
  EXPECT_EQ(list.exit_code, 0) << describe(list);
  EXPECT_NE(list.out.find(id), std::string::npos) << describe(list);
  EXPECT_NE(list.out.find("pending"), std::string::npos) << describe(list);

  const RunResult discard = session_command({"discard", id});
  EXPECT_EQ(discard.exit_code, 0) << describe(discard);
  EXPECT_FALSE(fs::exists(sessions_ + "/" + id));
  EXPECT_EQ(snapshot(project_), before_);
  const RunResult typo = run({"sessions", "--session-dir", sessions_ + "-no-such"});
  EXPECT_EQ(typo.exit_code, 1) << "a session dir that is not there listed nothing, exit 0\n"
                               << describe(typo);
  EXPECT_NE(typo.err.find("no such directory"), std::string::npos) << describe(typo);
  const RunResult gone = session_command({"changes", id});
  EXPECT_EQ(gone.exit_code, 1) << describe(gone);
  EXPECT_NE(gone.err.find("no session " + id), std::string::npos) << describe(gone);
}

// Dry runs started within one second were listed in the order of their ids' random suffixes.
TEST_P(DryRun, SessionsAreListedInTheOrderTheyBegan) {
  for (const char* name : {"first", "second", "third"})
    ASSERT_EQ(dry_run(std::string("echo x > ") + name).exit_code, 0);
  const RunResult list = run({"sessions", "--session-dir", sessions_, "--json"});
  ASSERT_EQ(list.exit_code, 0) << describe(list);
  std::vector<std::string> order;
  for (const auto& session : nlohmann::json::parse(list.out))
    order.push_back(session.at("command").back().get<std::string>());
  EXPECT_EQ(order,
            (std::vector<std::string>{"echo x > first", "echo x > second", "echo x > third"}))
      << list.out;
}

// A session in use by its dry run was listed as pending, and `jail discard` removed its layers
// from under the running tool (which then could not write, and the run still exited 0).
TEST_P(DryRun, ALiveSessionIsShownRunningAndIsNotDiscarded) {
  RunOptions options;
  options.cwd = project_;
  // The tool writes its second file when the test has looked (SIGUSR1, which jail forwards).
  const auto live =
      start({"--dry-run", "--session-dir", sessions_, "--", "sh", "-c",
             "trap 'echo b > live2.txt; exit 0' USR1; echo a > live.txt; echo started;"
             " while :; do sleep 0.05; done"},
            options);
  ASSERT_TRUE(live->wait_for_stdout("started", 10s));
  const std::string id = session_id();
  const RunResult list = run({"sessions", "--session-dir", sessions_});
  EXPECT_NE(list.out.find("running"), std::string::npos) << describe(list);
  const RunResult discard = session_command({"discard", id});
  EXPECT_EQ(discard.exit_code, 1) << describe(discard);
  EXPECT_NE(discard.err.find("is in use: its dry run is still going"), std::string::npos)
      << describe(discard);
  // Read while the tool still writes: said to be a snapshot, not the run's whole work.
  const RunResult early = session_command({"changes", id, "--stat"});
  EXPECT_EQ(early.exit_code, 0) << describe(early);
  EXPECT_NE(early.err.find("these are its changes as of now"), std::string::npos)
      << describe(early);
  ASSERT_EQ(::kill(live->pid(), SIGUSR1), 0);
  const RunResult ended = live->wait();
  EXPECT_EQ(ended.exit_code, 0) << describe(ended);
  EXPECT_EQ(ended.err.find("cannot"), std::string::npos) << describe(ended);
  EXPECT_EQ(changes_by_path(id), (std::map<std::string, std::string>{{"live.txt", "added file"},
                                                                     {"live2.txt", "added file"}}));
  const RunResult after = run({"sessions", "--session-dir", sessions_});
  EXPECT_NE(after.out.find("pending"), std::string::npos) << describe(after);
  EXPECT_EQ(session_command({"discard", id}).exit_code, 0);
  EXPECT_FALSE(fs::exists(sessions_ + "/" + id));
}

// A run cut short (jail killed) leaves a manifest that never finished, and a damaged manifest
// made a session that `jail sessions` hid and nothing could remove.
TEST_P(DryRun, UnfinishedAndDamagedSessionsAreListedAndCanBeDiscarded) {
  ASSERT_EQ(dry_run("echo new > new.txt").exit_code, 0);
  const std::string id = session_id();
  const std::string manifest = sessions_ + "/" + id + "/manifest.json";
  // Written back as the session's owner would have it (write_file gives files to nobody).
  const uid_t owner = as_root() ? 0 : kNobodyUid;
  const auto rewrite = [&](const std::string& text) {
    write_file(manifest, text, 0600);
    ASSERT_EQ(::chown(manifest.c_str(), owner, owner == 0 ? 0 : kNobodyGid), 0);
  };
  auto doc = nlohmann::json::parse(read_file(manifest).value_or("{}"));
  doc["finished"] = false;
  rewrite(doc.dump());
  const RunResult unfinished = run({"sessions", "--session-dir", sessions_});
  EXPECT_NE(unfinished.out.find("unfinished"), std::string::npos) << describe(unfinished);
  const RunResult commit = session_command({"commit", id});
  EXPECT_EQ(commit.exit_code, 1) << describe(commit);
  EXPECT_NE(commit.err.find("cut short"), std::string::npos) << describe(commit);

  rewrite("{");
  const RunResult damaged = run({"sessions", "--session-dir", sessions_, "--json"});
  EXPECT_EQ(damaged.exit_code, 0) << describe(damaged);
  EXPECT_NE(damaged.out.find("\"damaged\""), std::string::npos) << describe(damaged);
  EXPECT_NE(damaged.out.find(id), std::string::npos) << describe(damaged);
  const RunResult discard = session_command({"discard", id});
  EXPECT_EQ(discard.exit_code, 0) << describe(discard);
  EXPECT_FALSE(fs::exists(sessions_ + "/" + id));
}

// The commands a dry run suggests work when pasted: they name a --session-dir given to the run.
TEST_P(DryRun, TheSuggestedCommandsNameTheSessionDir) {
  const RunResult r = dry_run("echo new > new.txt");
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const std::string id = session_id();
  EXPECT_NE(r.err.find("`jail commit --session-dir " + sessions_ + " " + id + "`"),
            std::string::npos)
      << describe(r);
  const RunResult commit = session_command({"commit", id});
  EXPECT_NE(commit.err.find("`jail undo --session-dir " + sessions_ + " " + id + "`"),
            std::string::npos)
      << describe(commit);
}

// A session directory that cannot be made or reached is named as that, with the way out: it was
// "internal error: filesystem error: status: Permission denied [...]" (a HOME the caller cannot
// read) or "cannot create X" with no word of what X was for.
TEST_P(DryRun, AnUnusableSessionDirSaysSo) {
  RunOptions options;
  options.cwd = project_;
  std::vector<std::string> unusable{"/proc/1/jail-sessions"};
  // Behind a directory only root may enter (as root it would simply be made).
  if (!as_root()) unusable.push_back("/root/jail-sessions/x");
  for (const std::string& dir : unusable) {
    const RunResult r = run({"--dry-run", "--session-dir", dir, "--", "true"}, options);
    EXPECT_EQ(r.exit_code, 125) << describe(r);
    EXPECT_NE(r.err.find("cannot keep dry-run sessions in " + dir), std::string::npos)
        << describe(r);
    EXPECT_NE(r.err.find("with --session-dir DIR"), std::string::npos) << describe(r);
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << describe(r);
  }
}

TEST_P(DryRun, SessionDirInsideTheProjectIsAClearError) {
  RunOptions options;
  options.cwd = project_;
  const RunResult r =
      run({"--dry-run", "--session-dir", project_ + "/.sessions", "--", "true"}, options);
  EXPECT_EQ(r.exit_code, 125) << describe(r);
  EXPECT_NE(r.err.find("keep sessions elsewhere with --session-dir"), std::string::npos)
      << describe(r);
  EXPECT_FALSE(fs::exists(project_ + "/.sessions"));
}

// overlayfs cannot take a directory with a mount below it from inside the jail's user
// namespace; the refusal names the mount, before a session is made. The mount is made in a
// mount namespace of the test's own (so as root only: the cause does not depend on the caller).
TEST_P(DryRun, AMountInsideTheBoundDirectoryIsNamed) {
  if (!as_root()) {
    GTEST_SKIP() << "the mount below the project is made with unshare -m, which needs root; the "
                    "root caller's run covers the refusal, which jail makes before anything runs";
  }
  const std::string out = shell_output(
      "cd " + project_ + " && unshare --mount --propagation private sh -c 'mount -t tmpfs none " +
      // Inside the single quotes of sh -c: the path in double quotes.
      project_ + "/box && exec \"" + JAIL_BINARY + "\" --dry-run --session-dir " + sessions_ +
      " -- true'; echo rc=$?");
  EXPECT_NE(out.find(project_ + "/box is mounted inside it"), std::string::npos) << out;
  EXPECT_NE(out.find("rc=125"), std::string::npos) << out;
  EXPECT_TRUE(fs::is_empty(sessions_)) << "a refused dry run leaves no session";
}

// A run jail could not set up ran no tool: no session is left to review or to clean up.
TEST_P(DryRun, SetupFailureLeavesNoSession) {
  RunOptions options;
  options.cwd = project_;
  const RunResult r = run(
      {"--dry-run", "--session-dir", sessions_, "--cwd", "/no/such/dir", "--", "true"}, options);
  EXPECT_EQ(r.exit_code, 125) << describe(r);
  EXPECT_TRUE(fs::is_empty(sessions_)) << "a failed start left a session behind";
  EXPECT_EQ(r.err.find("dry run: the host is unchanged"), std::string::npos) << describe(r);
}

JAIL_INSTANTIATE_FOR_CALLERS(DryRun);

}  // namespace
}  // namespace jail_test
