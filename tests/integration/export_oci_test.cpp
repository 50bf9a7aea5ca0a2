// jail export-oci: what a bundle cannot carry is refused rather than dropped, and the bundle's
// directory is new (or empty) and its owner's alone — written as root, a directory someone had
// filled could lead the writes anywhere.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "run_jail.hpp"

namespace jail_test {
namespace {

namespace fs = std::filesystem;

RunResult export_oci(const std::string& bundle, std::vector<std::string> args) {
  args.insert(args.begin(), {"export-oci", "--bundle", bundle});
  return run_jail(args);
}

TEST(ExportOci, WhatABundleCannotCarryIsRefused) {
  TempDir work;
  const std::string bundle = work / "bundle";
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      // No user namespace in the bundle: uid 0 would be the host's root.
      {{"--uid", "0"}, "--uid 0"},
      {{"--gid", "0"}, "--gid 0"},
      // No runtime holds these: they would be dropped without a word.
      {{"--timeout", "1s"}, "--timeout"},
      {{"--max-output", "10"}, "--max-output"},
      {{"--stdin", "none"}, "--stdin none"},
      // Taken and then dropped, silently: a cgroup of this host, reports of a run that never
      // happens, and a terminal the runtime owns.
      {{"--cgroup-parent", "/jail-export-test"}, "--cgroup-parent"},
      {{"--trace-timing"}, "--trace-timing"},
      {{"--status-file", work / "status.json"}, "--status-file"},
      {{"--status-fd", "2"}, "--status-fd"},
      {{"--audit-log", work / "audit.log"}, "--audit-log"},
      {{"--tty", "always"}, "--tty always"},
      // A runtime would make it, as root, on the host.
      {{"--no-cwd", "--cwd", "/no/such/dir"}, "working directory /no/such/dir"},
  };
  for (const auto& [flags, named] : refused) {
    std::vector<std::string> args = flags;
    args.insert(args.end(), {"--", "true"});
    RunResult r = export_oci(bundle, args);
    EXPECT_EQ(r.exit_code, 125) << describe(r);
    EXPECT_NE(r.err.find(named), std::string::npos) << describe(r);
    // Nothing half written is left, nor the directory export-oci made for it (an empty one
    // was left behind); the next export into the same directory works.
    EXPECT_FALSE(fs::exists(bundle)) << named;
  }
  EXPECT_FALSE(fs::exists(work / "status.json"));
  EXPECT_FALSE(fs::exists(work / "audit.log"));
  // An empty directory that was there before stays, empty.
  const std::string kept = work / "kept";
  fs::create_directories(kept);
  RunResult refused_in_kept = export_oci(kept, {"--no-cwd", "--cwd", "/no/such/dir", "--", "true"});
  EXPECT_EQ(refused_in_kept.exit_code, 125) << describe(refused_in_kept);
  EXPECT_TRUE(fs::is_directory(kept) && fs::is_empty(kept));
  RunResult fine = export_oci(bundle, {"--no-cwd", "--", "true"});
  EXPECT_EQ(fine.exit_code, 0) << describe(fine);
  EXPECT_TRUE(fs::exists(fs::path(bundle) / "config.json"));
}

TEST(ExportOci, TheBundleDirectoryIsNewOrEmptyAndItsOwnersAlone) {
  TempDir work;
  // A directory someone filled beforehand: a symlink where the rootfs's /etc/passwd goes.
  const std::string victim = work / "victim";
  write_file(victim, "untouched\n");
  const fs::path filled = work / "filled";
  fs::create_directories(filled / "rootfs/etc");
  fs::create_symlink(victim, filled / "rootfs/etc/passwd");
  RunResult r = export_oci(filled.string(), {"--no-cwd", "--", "true"});
  EXPECT_EQ(r.exit_code, 125) << describe(r);
  EXPECT_NE(r.err.find("it is a directory that is not empty"), std::string::npos) << describe(r);
  EXPECT_EQ(read_file(victim), "untouched\n") << "export-oci wrote through the symlink";
  // A link to an empty directory is not followed either.
  fs::create_directories(work / "empty");
  fs::create_directory_symlink(work / "empty", work / "link");
  RunResult linked = export_oci(work / "link", {"--no-cwd", "--", "true"});
  EXPECT_EQ(linked.exit_code, 125) << describe(linked);
  // Said as a symlink: "not an empty directory" read as wrong for a link to an empty one.
  EXPECT_NE(linked.err.find("it is a symlink"), std::string::npos) << describe(linked);
  EXPECT_TRUE(fs::is_empty(work / "empty"));
  write_file(work / "file", "");
  RunResult file = export_oci(work / "file", {"--no-cwd", "--", "true"});
  EXPECT_NE(file.err.find("it is a file"), std::string::npos) << describe(file);
  // --bundle with no directory, or twice.
  RunResult bare = run_jail({"export-oci", "--no-cwd", "--bundle", "--", "true"});
  EXPECT_NE(bare.err.find("--bundle needs a directory"), std::string::npos) << describe(bare);
  RunResult twice = export_oci(work / "a", {"--bundle", work / "b", "--no-cwd", "--", "true"});
  EXPECT_EQ(twice.exit_code, 125) << describe(twice);
  EXPECT_NE(twice.err.find("--bundle given 2 times"), std::string::npos) << describe(twice);
  // A new one is made 0700: config.json carries the environment (--pass-env included).
  const std::string fresh = work / "fresh";
  RunResult made = export_oci(fresh, {"--no-cwd", "--", "true"});
  ASSERT_EQ(made.exit_code, 0) << describe(made);
  struct stat info {};
  ASSERT_EQ(::stat(fresh.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0700u);
  // And an export into it again is refused, not half rewritten.
  RunResult again = export_oci(fresh, {"--no-cwd", "--", "true"});
  EXPECT_EQ(again.exit_code, 125) << describe(again);
  // An empty directory the caller may write into but not chmod (root's, 0777): named with its
  // own error; it was "a directory that is not empty".
  const std::string shared = work / "shared";
  fs::create_directories(shared);
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  RunOptions unprivileged;
  unprivileged.caller = Caller::unprivileged;
  unprivileged.cwd = "/";
  RunResult not_mine =
      run_jail({"export-oci", "--bundle", shared, "--no-cwd", "--", "true"}, unprivileged);
  EXPECT_EQ(not_mine.exit_code, 125) << describe(not_mine);
  EXPECT_NE(not_mine.err.find("cannot make it its owner's alone (chmod 0700): Operation not "
                              "permitted"),
            std::string::npos)
      << describe(not_mine);
  EXPECT_TRUE(fs::is_empty(shared));
}

}  // namespace
}  // namespace jail_test
