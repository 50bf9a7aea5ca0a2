// TempDir removes what it made and only that: nested directories, files and symlinks go, and a
// symlink's target outside the directory stays.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "temp_dir.hpp"

namespace jail {
namespace {

namespace fs = std::filesystem;

TEST(TempDirRemoval, RemovesATreeButNotWhatItsSymlinksPointAt) {
  TempDir outside("jail-temp-dir-test");
  std::ofstream(outside.path() / "keep.txt") << "kept";
  fs::path made;
  {
    TempDir dir("jail-temp-dir-test");
    made = dir.path();
    fs::create_directories(made / "a" / "b" / "c");
    std::ofstream(made / "a" / "b" / "c" / "file") << "x";
    std::ofstream(made / "top") << "y";
    fs::create_directory_symlink(outside.path(), made / "a" / "to-outside");
    fs::create_symlink(outside.path() / "keep.txt", made / "a" / "b" / "to-file");
    ASSERT_EQ(::mkfifo((made / "a" / "fifo").c_str(), 0600), 0);
    // A directory without write or search permission for its owner: root removes it anyway,
    // as remove_all did.
    fs::create_directory(made / "locked");
    std::ofstream(made / "locked" / "inside") << "z";
    ASSERT_EQ(::chmod((made / "locked").c_str(), 0500), 0);
  }
  EXPECT_FALSE(fs::exists(fs::symlink_status(made)));
  EXPECT_TRUE(fs::exists(outside.path() / "keep.txt"));
}

TEST(TempDirRemoval, AMovedFromDirectoryRemovesNothing) {
  TempDir first("jail-temp-dir-test");
  const fs::path path = first.path();
  { TempDir second(std::move(first)); }
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace jail
