// The run flags' own checks, as a user meets them: values refused with the reason, mounts that
// hide one another said.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "refusal.hpp"

namespace jail::runner {
namespace {

std::vector<std::string> warnings_of(const std::vector<std::string>& options) {
  return parse_run_options(options, {"true"}).log.warnings;
}

// A time limit is counted in whole milliseconds: "0.5ms" used to become 1 ms without a word, and
// "0.4ms" was "not a duration".
TEST(RunOptionsDurations, AFractionOfAMillisecondIsRefusedWithTheReason) {
  for (const char* flag : {"--timeout", "--kill-grace", "--cpu-time"}) {
    SCOPED_TRACE(flag);
    for (const char* text : {"0.5ms", "0.4ms", "1.0005s"}) {
      const std::string e = refusal_of({"--no-cwd", flag, text});
      EXPECT_TRUE(contains(e, std::string(flag) + " '" + text + "'")) << e;
      EXPECT_TRUE(contains(e, "not a whole number of milliseconds")) << e;
    }
  }
  EXPECT_TRUE(contains(refusal_of({"--no-cwd", "--timeout", "soon"}), "not a duration like"));
  EXPECT_TRUE(contains(refusal_of({"--no-cwd", "--timeout", "0"}), "give more than 0"));
}

TEST(RunOptionsDurations, DecimalsThatAreWholeMillisecondsAreTakenExactly) {
  // 1.1 * 1000 is 1100.0000000000002 in binary floating point.
  EXPECT_EQ(parse_run_options({"--no-cwd", "--timeout", "1.1s"}, {"true"}).spec.limits.timeout,
            std::chrono::milliseconds(1100));
  EXPECT_EQ(parse_run_options({"--no-cwd", "--timeout", "0.001s"}, {"true"}).spec.limits.timeout,
            std::chrono::milliseconds(1));
  EXPECT_EQ(parse_run_options({"--no-cwd", "--timeout", "1.5m"}, {"true"}).spec.limits.timeout,
            std::chrono::milliseconds(90000));
}

// "--env 'A B=1'" set a variable no shell can name: a quoting slip, now said.
TEST(RunOptionsEnvironment, ANameWithASpaceOrControlCharacterIsRefused) {
  for (const char* entry : {"A B=1", " A=1", "A\tB=1", "A\nB=1"}) {
    const std::string e = refusal_of({"--no-cwd", "--env", entry});
    EXPECT_TRUE(contains(e, "--env '")) << e;
    EXPECT_TRUE(contains(e, "space or a control character")) << e;
  }
  EXPECT_TRUE(contains(refusal_of({"--no-cwd", "--pass-env", "HOME PATH"}),
                       "space or a control character"));
  // Spaces in the value are the value's own.
  const auto env =
      parse_run_options({"--no-cwd", "--env", "GREETING=hello world"}, {"true"}).spec.env;
  EXPECT_NE(std::find(env.begin(), env.end(), "GREETING=hello world"), env.end());
}

// A ':' in a bind's path had no way to be written: the first one always split SRC from DST.
TEST(RunOptionsMounts, AnEscapedColonIsPartOfThePath) {
  const Spec both =
      parse_run_options({"--no-cwd", "--ro-bind", "/srv/a\\:b:/data/x\\:y"}, {"true"}).spec;
  ASSERT_EQ(both.mounts.size(), 1u);
  EXPECT_EQ(both.mounts[0].source, "/srv/a:b");
  EXPECT_EQ(both.mounts[0].target, "/data/x:y");
  const Spec one = parse_run_options({"--no-cwd", "--bind", "/srv/a\\:b"}, {"true"}).spec;
  ASSERT_EQ(one.mounts.size(), 1u);
  EXPECT_EQ(one.mounts[0].source, "/srv/a:b");
  EXPECT_EQ(one.mounts[0].target, "/srv/a:b");
  // An unescaped ':' still splits, and a backslash before anything else is kept.
  const Spec plain = parse_run_options({"--no-cwd", "--bind", "/srv/a\\b:/b"}, {"true"}).spec;
  EXPECT_EQ(plain.mounts[0].source, "/srv/a\\b");
  EXPECT_EQ(plain.mounts[0].target, "/b");
  EXPECT_TRUE(
      contains(refusal_of({"--no-cwd", "--bind", "/srv:"}), "write a ':' in a path as \\:"));
}

// Two mounts on one place: the last one won and the other was gone without a word.
TEST(RunOptionsMounts, AMountHiddenByALaterOneIsWarnedOf) {
  const auto same = warnings_of({"--no-cwd", "--ro-bind", "/etc:/mnt", "--bind", "/srv:/mnt/"});
  ASSERT_EQ(same.size(), 1u);
  EXPECT_TRUE(contains(same[0],
                       "--ro-bind /etc:/mnt on the command line is hidden by --bind "
                       "/srv:/mnt/ on the command line, mounted later on the same place"))
      << same[0];
  const auto above = warnings_of({"--no-cwd", "--ro-bind", "/etc:/data/etc", "--tmpfs", "/data"});
  ASSERT_EQ(above.size(), 1u);
  EXPECT_TRUE(contains(above[0], "a directory above it")) << above[0];
  // A mount below an earlier one sits on it, as meant; places that only share a prefix are apart.
  EXPECT_TRUE(warnings_of({"--no-cwd", "--tmpfs", "/data", "--ro-bind", "/etc:/data/etc",
                           "--ro-bind", "/etc:/data2"})
                  .empty());
}

// Under --rootfs the current directory is left out, and a script named relative to it was not
// found with no word why; -v now says it, with the way to bring it.
TEST(RunOptionsMounts, UnderRootfsTheCurrentDirectoryLeftOutIsNotedAtVerbose) {
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path("/usr/share");
  const auto notes = [](const std::vector<std::string>& options) {
    return parse_run_options(options, {"true"}).log.notes;
  };
  const auto left_out = notes({"--rootfs", "/srv"});
  const auto without_rootfs = notes({});
  const auto told_where = notes({"--rootfs", "/srv", "--cwd", "/"});
  const auto asked_none = notes({"--rootfs", "/srv", "--no-cwd"});
  std::filesystem::current_path(before);
  ASSERT_EQ(left_out.size(), 1u);
  EXPECT_TRUE(contains(left_out[0], "the current directory /usr/share is not bound"))
      << left_out[0];
  EXPECT_TRUE(contains(left_out[0], "--ro-bind .:/tmp/work --cwd /tmp/work")) << left_out[0];
  EXPECT_TRUE(without_rootfs.empty());
  EXPECT_TRUE(told_where.empty());
  EXPECT_TRUE(asked_none.empty());
}

}  // namespace
}  // namespace jail::runner
