// Mount flags: --bind (read-write, writes reach the host), --ro-bind (read-only), --tmpfs.
#include <gtest/gtest.h>

#include <filesystem>

#include "run_jail.hpp"

namespace jail_test {
namespace {

class Mounts : public CallerTest {};

TEST_P(Mounts, BindWritesReachTheHost) {
  TempDir data;
  write_file(data / "in.txt", "input\n");
  RunResult r = run({"--bind", data.path() + ":/data", "--", "sh", "-c",
                     "cat /data/in.txt && echo written-inside > /data/out.txt && mkdir /data/sub"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "input\n") << describe(r);
  EXPECT_EQ(read_file(data / "out.txt").value_or("<missing>"), "written-inside\n");
  EXPECT_TRUE(std::filesystem::is_directory(data / "sub"));
}

TEST_P(Mounts, BindWithoutDestinationUsesTheSamePath) {
  TempDir data;
  RunResult r = run({"--no-cwd", "--bind", data.path(), "--", "sh", "-c",
                     "echo same-path > " + (data / "out.txt")});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(read_file(data / "out.txt").value_or("<missing>"), "same-path\n");
}

// A ':' in a path is written "\\:" (the first plain ':' splits SRC from DST): there was no way to
// bind such a path at all.
TEST_P(Mounts, AColonInABindPathIsWrittenEscaped) {
  TempDir data;
  std::filesystem::create_directory(data / "a:b");
  write_file(data / "a:b/in.txt", "colon\n", 0666);
  RunResult r = run({"--no-cwd", "--ro-bind", data.path() + "/a\\:b:/data/x\\:y", "--", "cat",
                     "/data/x:y/in.txt"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "colon\n") << describe(r);
}

TEST_P(Mounts, BindOfASingleFile) {
  TempDir data;
  write_file(data / "config", "one\n", 0666);
  RunResult r = run({"--bind", (data / "config") + ":/etc/app.conf", "--", "sh", "-c",
                     "cat /etc/app.conf && echo two > /etc/app.conf"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "one\n") << describe(r);
  EXPECT_EQ(read_file(data / "config").value_or("<missing>"), "two\n");
}

TEST_P(Mounts, RoBindIsReadOnly) {
  TempDir data;
  write_file(data / "in.txt", "input\n", 0666);
  RunResult r = run(concat({probe_mount(),
                            {"--ro-bind", data.path() + ":/data", "--", probe("try_write"),
                             "/data/in.txt", "/data/new.txt"}}));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "/data/in.txt EROFS\n/data/new.txt EROFS\n") << describe(r);
  EXPECT_EQ(read_file(data / "in.txt").value_or("<missing>"), "input\n");
  EXPECT_FALSE(read_file(data / "new.txt"));

  RunResult cat = run({"--ro-bind", data.path() + ":/data", "--", "cat", "/data/in.txt"});
  EXPECT_EQ(cat.exit_code, 0) << describe(cat);
  EXPECT_EQ(cat.out, "input\n") << describe(cat);
}

TEST_P(Mounts, RoBindStaysReadOnlyUnderARwBind) {
  // A read-only bind nested inside a read-write one keeps its own flag.
  TempDir outer;
  TempDir inner;
  std::filesystem::create_directory(outer / "inner");
  RunResult r =
      run(concat({probe_mount(),
                  {"--bind", outer.path() + ":/outer", "--ro-bind", inner.path() + ":/outer/inner",
                   "--", probe("try_write"), "/outer/a", "/outer/inner/b"}}));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "/outer/a ok\n/outer/inner/b EROFS\n") << describe(r);
}

TEST_P(Mounts, MountsTakeThePlaceOfTheRootsOwnEntries) {
  // jail's root recreates /etc/localtime and /bin as the host has them (symlinks on Debian 12);
  // a mount at that very path is what the tool sees there, not a "cannot mount on a symlink".
  TempDir data;
  write_file(data / "zone", "zone-of-the-caller\n", 0644);
  std::filesystem::create_directory(data / "bin");
  std::filesystem::copy_file("/usr/bin/echo", data / "bin/own-echo");
  RunResult r =
      run({"--ro-bind", (data / "zone") + ":/etc/localtime", "--ro-bind", (data / "bin") + ":/bin",
           "--", "/usr/bin/sh", "-c", "cat /etc/localtime; /bin/own-echo from-the-callers-bin"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "zone-of-the-caller\nfrom-the-callers-bin\n") << describe(r);
}

TEST_P(Mounts, TmpfsIsWritableAndEmpty) {
  RunResult r = run({"--tmpfs", "/scratch", "--", "sh", "-c",
                     "ls -A /scratch; echo data > /scratch/f && cat /scratch/f &&"
                     " stat -f -c %T /scratch"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "data\ntmpfs\n") << describe(r);
}

TEST_P(Mounts, TmpfsSize) {
  RunResult r = run({"--tmpfs", "/scratch:1m", "--", "sh", "-c",
                     "head -c 4000000 /dev/zero > /scratch/big; echo rc=$?"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "rc=1\n") << describe(r);
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << describe(r);
}

TEST_P(Mounts, TmpfsIsPrivateToTheRun) {
  RunResult first = run({"--tmpfs", "/scratch", "--", "sh", "-c", "echo x > /scratch/left"});
  ASSERT_EQ(first.exit_code, 0) << describe(first);
  RunResult second = run({"--tmpfs", "/scratch", "--", "ls", "-A", "/scratch"});
  EXPECT_EQ(second.exit_code, 0) << describe(second);
  EXPECT_EQ(second.out, "") << describe(second);
}

JAIL_INSTANTIATE_FOR_CALLERS(Mounts);

}  // namespace
}  // namespace jail_test
