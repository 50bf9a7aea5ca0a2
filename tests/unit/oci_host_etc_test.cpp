// oci::inline_host_entry: what a runsc bundle carries in its rootfs instead of a bind, and what
// it leaves to a bind.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <linux/magic.h>

#include "oci/host_etc.hpp"

namespace {

namespace fs = std::filesystem;

class HostEtc : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = "/var/tmp/jail-host-etc-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    fs::create_directories(dir_ / "out");
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text, mode_t mode = 0644) {
    const fs::path path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }
  static std::string read(const fs::path& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static struct stat lstat_of(const fs::path& path) {
    struct stat info {};
    EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
    return info;
  }

  fs::path dir_;
};

TEST_F(HostEtc, AFileIsACopyEvenOnTheSameFileSystem) {
  const fs::path source = write("src/services", "http 80/tcp\n", 0640);
  const fs::path dest = dir_ / "out/services";
  ASSERT_TRUE(jail::oci::inline_host_entry(source, dest));
  EXPECT_EQ(read(dest), "http 80/tcp\n");
  EXPECT_EQ(lstat_of(dest).st_mode, lstat_of(source).st_mode);
  // Not a hard link: what is later written in the bundle must never reach the host's file.
  EXPECT_NE(lstat_of(dest).st_ino, lstat_of(source).st_ino);
  std::ofstream(dest, std::ios::trunc) << "changed in the bundle\n";
  EXPECT_EQ(read(source), "http 80/tcp\n");
}

TEST_F(HostEtc, AFileIsCopiedWithItsModeAcrossFileSystems) {
  struct statfs shm {};
  if (::statfs("/dev/shm", &shm) != 0 || shm.f_type != TMPFS_MAGIC) {
    GTEST_SKIP() << "/dev/shm is not a tmpfs here: no second file system to copy to";
  }
  std::string pattern = "/dev/shm/jail-host-etc-test-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const fs::path other = pattern;
  const fs::path source = write("src/gai.conf", "precedence ::1/128 50\n", 0604);
  const bool placed = jail::oci::inline_host_entry(source, other / "gai.conf");
  EXPECT_TRUE(placed);
  if (placed) {
    EXPECT_EQ(read(other / "gai.conf"), "precedence ::1/128 50\n");
    EXPECT_NE(lstat_of(other / "gai.conf").st_ino, lstat_of(source).st_ino);
    EXPECT_EQ(lstat_of(other / "gai.conf").st_mode, lstat_of(source).st_mode);
    EXPECT_EQ(lstat_of(other / "gai.conf").st_uid, lstat_of(source).st_uid);
  }
  fs::remove_all(other);
}

TEST_F(HostEtc, ASmallDirectoryIsRecreatedWithItsSymlinksNotFollowed) {
  write("src/conf.d/a.conf", "a\n");
  write("src/conf.d/sub/b.conf", "b\n", 0600);
  fs::create_directory_symlink("/usr", dir_ / "src/conf.d/usr-link");
  fs::create_symlink("a.conf", dir_ / "src/conf.d/alias");
  ::chmod((dir_ / "src/conf.d/sub").c_str(), 0750);
  const fs::path dest = dir_ / "out/conf.d";
  ASSERT_TRUE(jail::oci::inline_host_entry(dir_ / "src/conf.d", dest));
  EXPECT_EQ(read(dest / "a.conf"), "a\n");
  EXPECT_EQ(read(dest / "sub/b.conf"), "b\n");
  EXPECT_EQ(lstat_of(dest / "sub").st_mode, lstat_of(dir_ / "src/conf.d/sub").st_mode);
  EXPECT_EQ(lstat_of(dest / "sub/b.conf").st_mode & 07777, 0600u);
  EXPECT_TRUE(fs::is_symlink(dest / "usr-link"));
  EXPECT_EQ(fs::read_symlink(dest / "usr-link"), "/usr");
  EXPECT_EQ(fs::read_symlink(dest / "alias"), "a.conf");
  int entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::recursive_directory_iterator(dest)) ++entries;
  EXPECT_EQ(entries, 5) << "nothing below /usr was copied";
}

TEST_F(HostEtc, ABigDirectoryIsLeftToABind) {
  for (std::size_t i = 0; i <= jail::oci::kMaxInlinedEntries; ++i) {
    write("src/many/" + std::to_string(i), "x");
  }
  const fs::path dest = dir_ / "out/many";
  EXPECT_FALSE(jail::oci::inline_host_entry(dir_ / "src/many", dest));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dest)));
}

TEST_F(HostEtc, ADirectoryWithAFifoIsLeftToABindAndNothingStays) {
  write("src/odd/a.conf", "a\n");
  ASSERT_EQ(::mkfifo((dir_ / "src/odd/pipe").c_str(), 0600), 0);
  const fs::path dest = dir_ / "out/odd";
  EXPECT_FALSE(jail::oci::inline_host_entry(dir_ / "src/odd", dest));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dest)));
}

TEST_F(HostEtc, ASymlinkOrAMissingEntryIsLeftToTheCaller) {
  write("src/real", "r\n");
  fs::create_symlink("real", dir_ / "src/link");
  EXPECT_FALSE(jail::oci::inline_host_entry(dir_ / "src/link", dir_ / "out/link"));
  EXPECT_FALSE(jail::oci::inline_host_entry(dir_ / "src/missing", dir_ / "out/missing"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ / "out/link")));
}

}  // namespace
