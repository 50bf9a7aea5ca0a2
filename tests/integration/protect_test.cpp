// --protect SUBPATH keeps part of a writable bind read-only: `--bind . --protect .git` is how an
// agent host lets a tool edit a checkout but not rewrite its history. Attacked as a tool would:
// write, truncate, remove, rename the directory away and put another in its place.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "run_jail.hpp"

namespace jail_test {
namespace {

class Protect : public CallerTest {};

TEST_P(Protect, AProtectedSubpathOfAWritableBindStaysAsItWas) {
  TempDir project;
  std::filesystem::create_directories(project / ".git/refs");
  write_file(project / ".git/HEAD", "ref: refs/heads/main\n");
  RunOptions in_project;
  in_project.cwd = project.path();
  const RunResult r =
      run({"--bind", ".", "--protect", ".git", "--", "sh", "-c",
           "echo evil > .git/HEAD; echo write=$?; true > .git/HEAD; echo truncate=$?; "
           "rm -rf .git 2>/dev/null; echo remove=$?; mv .git moved 2>/dev/null; echo rename=$?; "
           "echo hook > .git/refs/x; echo add=$?; echo work > notes && echo notes=ok"},
          in_project);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  for (const char* attempt : {"write=", "truncate=", "remove=", "rename=", "add="}) {
    EXPECT_NE(r.out.find(attempt), std::string::npos) << describe(r);
    EXPECT_EQ(r.out.find(std::string(attempt) + "0\n"), std::string::npos) << attempt << "\n"
                                                                           << describe(r);
  }
  EXPECT_NE(r.out.find("notes=ok"), std::string::npos) << describe(r);
  EXPECT_EQ(read_file(project / ".git/HEAD"), std::optional<std::string>("ref: refs/heads/main\n"));
  EXPECT_FALSE(std::filesystem::exists(project / ".git/refs/x"));
  EXPECT_FALSE(std::filesystem::exists(project / "moved"));
  EXPECT_EQ(read_file(project / "notes"), std::optional<std::string>("work\n"));
}

TEST_P(Protect, WhatCannotBeProtectedIsSaid) {
  TempDir project;
  std::filesystem::create_directories(project / ".git");
  RunOptions in_project;
  in_project.cwd = project.path();
  const RunResult read_only = run({"--protect", ".git", "--", "true"}, in_project);
  EXPECT_EQ(read_only.exit_code, 125) << describe(read_only);
  EXPECT_NE(read_only.err.find("in the read-only bind of " + project.path() + " already"),
            std::string::npos)
      << describe(read_only);
  const RunResult missing = run({"--bind", ".", "--protect", "nothere", "--", "true"}, in_project);
  EXPECT_EQ(missing.exit_code, 125) << describe(missing);
  EXPECT_NE(missing.err.find("--protect nothere: " + project.path() + "/nothere does not exist"),
            std::string::npos)
      << describe(missing);
  const RunResult outside =
      run({"--no-cwd", "--protect", project / ".git", "--", "true"}, in_project);
  EXPECT_EQ(outside.exit_code, 125) << describe(outside);
  EXPECT_NE(outside.err.find("is in no bind of the jail"), std::string::npos) << describe(outside);
}

JAIL_INSTANTIATE_FOR_CALLERS(Protect);

}  // namespace
}  // namespace jail_test
