// A bind's source is resolved without following symbolic links, unless --bind-follow: a tool
// that could write in one run's bind could otherwise plant a link that leads the next run's
// bind anywhere the caller can reach (a root caller: anywhere).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "run_jail.hpp"

namespace jail_test {
namespace {

class BindSource : public CallerTest {};

TEST_P(BindSource, ALinkPlantedByAnEarlierRunIsNotFollowed) {
  TempDir work;
  TempDir elsewhere;
  write_file(elsewhere / "secret", "not for the tool\n");
  // Run 1: the tool leaves a link in the directory it may write.
  const RunResult plant =
      run({"--bind", work.path() + ":/w", "--", "ln", "-s", elsewhere.path(), "/w/data"});
  ASSERT_EQ(plant.exit_code, 0) << describe(plant);

  // Run 2 binds what looks like a subdirectory of the project: refused, naming the link.
  const RunResult refused =
      run({"--ro-bind", work / "data" + ":/data", "--", "cat", "/data/secret"});
  EXPECT_EQ(refused.exit_code, 125) << describe(refused);
  EXPECT_EQ(refused.out.find("not for the tool"), std::string::npos) << describe(refused);
  EXPECT_NE(refused.err.find(work / "data" + " is a symbolic link to " + elsewhere.path()),
            std::string::npos)
      << describe(refused);
  EXPECT_NE(refused.err.find("--bind-follow"), std::string::npos) << describe(refused);

  // A link on the way, not only at the end, and a file as the source.
  const RunResult through = run({"--ro-bind", work / "data/secret" + ":/s", "--", "cat", "/s"});
  EXPECT_EQ(through.exit_code, 125) << describe(through);
  EXPECT_EQ(through.out.find("not for the tool"), std::string::npos) << describe(through);

  // A dry run's layer is refused the same way, before any session is made.
  TempDir sessions;
  const RunResult dry = run({"--dry-run", "--session-dir", sessions.path(), "--no-cwd", "--bind",
                             work / "data" + ":/data", "--", "true"});
  EXPECT_EQ(dry.exit_code, 125) << describe(dry);
  EXPECT_NE(dry.err.find("is a symbolic link to " + elsewhere.path()), std::string::npos)
      << describe(dry);

  // Asked for, the link is followed.
  const RunResult followed =
      run({"--bind-follow", "--ro-bind", work / "data" + ":/data", "--", "cat", "/data/secret"});
  EXPECT_EQ(followed.exit_code, 0) << describe(followed);
  EXPECT_EQ(followed.out, "not for the tool\n") << describe(followed);
}

// A mount inside a writable bind whose mount point is missing would have had jail create it
// through the bind, on the host: refused, with the host path named; made first, it mounts.
TEST_P(BindSource, AMountPointIsNeverMadeOnTheHost) {
  TempDir work;
  TempDir data;
  const RunResult refused = run({"--no-cwd", "--bind", work.path() + ":/w", "--ro-bind",
                                 data.path() + ":/w/inner", "--tmpfs", "/w/scratch", "--", "true"});
  EXPECT_EQ(refused.exit_code, 125) << describe(refused);
  EXPECT_NE(refused.err.find("as " + work.path() + "/inner"), std::string::npos)
      << describe(refused);
  EXPECT_NE(refused.err.find("as " + work.path() + "/scratch"), std::string::npos)
      << describe(refused);
  EXPECT_FALSE(std::filesystem::exists(work / "inner"));
  EXPECT_FALSE(std::filesystem::exists(work / "scratch"));
  std::filesystem::create_directory(work / "inner");
  const RunResult made = run({"--no-cwd", "--bind", work.path() + ":/w", "--ro-bind",
                              data.path() + ":/w/inner", "--", "true"});
  EXPECT_EQ(made.exit_code, 0) << describe(made);
}

JAIL_INSTANTIATE_FOR_CALLERS(BindSource);

}  // namespace
}  // namespace jail_test
