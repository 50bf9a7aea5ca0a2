// Under --runtime runsc the caller's binds are opened by jail's keeper the same way: a planted
// link in a bind source is refused, and a bound home's credential stores are masked.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "run_jail.hpp"
#include "runsc_fixture.hpp"

namespace jail_test {
namespace {

TEST_F(Runsc, APlantedLinkAndCredentialStoresStayOutOfTheSandbox) {
  TempDir work;
  TempDir elsewhere;
  write_file(elsewhere / "secret", "not for the tool\n");
  std::filesystem::create_directory_symlink(elsewhere.path(), work / "data");
  const RunResult link =
      runsc({"--no-cwd", "--ro-bind", work / "data" + ":/data", "--", "cat", "/data/secret"});
  EXPECT_EQ(link.exit_code, 125) << describe(link);
  EXPECT_EQ(link.out.find("not for the tool"), std::string::npos) << describe(link);
  EXPECT_NE(link.err.find("is a symbolic link to " + elsewhere.path()), std::string::npos)
      << describe(link);

  TempDir home;
  std::filesystem::create_directories(home / ".ssh");
  write_file(home / ".ssh/id_ed25519", "PRIVATE KEY\n", 0600);
  write_file(home / ".netrc", "machine example.org password hunter2\n", 0600);
  write_file(home / "notes", "plain\n");
  const RunResult masked =
      runsc({"--no-cwd", "--bind", home.path() + ":/home/u", "--", "sh", "-c",
             "cat /home/u/.ssh/id_ed25519 /home/u/.netrc /home/u/notes 2>/dev/null; true"});
  EXPECT_EQ(masked.exit_code, 0) << describe(masked);
  EXPECT_EQ(masked.out.find("PRIVATE KEY"), std::string::npos) << describe(masked);
  EXPECT_EQ(masked.out.find("hunter2"), std::string::npos) << describe(masked);
  EXPECT_NE(masked.out.find("plain"), std::string::npos) << describe(masked);
}

}  // namespace
}  // namespace jail_test
