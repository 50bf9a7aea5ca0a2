// read_elf reads the loader's view of a file (its headers and the strings they point to) and
// nothing else: a huge file costs a few KiB of reads, not its size in memory. jail rootfs check
// reads the host's files the tool names; a 516 MiB library took it to 1 GB RSS when read whole.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "rootfs/elf.hpp"

namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kHuge = std::uint64_t{256} << 20;
// What reading headers and strings may cost: generous, yet far below kHuge.
constexpr std::uint64_t kFewReads = std::uint64_t{1} << 20;

// Bytes this process has read with read()/pread() so far (/proc/self/io's rchar).
std::uint64_t bytes_read() {
  std::ifstream io("/proc/self/io");
  std::string key;
  std::uint64_t value = 0;
  while (io >> key >> value) {
    if (key == "rchar:") return value;
  }
  ADD_FAILURE() << "no rchar in /proc/self/io";
  return 0;
}

// A file under /var/tmp, removed at the end.
class ScratchFile {
 public:
  ScratchFile() {
    std::string pattern = "/var/tmp/jail-elf-test-XXXXXX";
    const int fd = ::mkstemp(pattern.data());
    if (fd >= 0) ::close(fd);
    path_ = pattern;
  }
  ~ScratchFile() { fs::remove(path_); }
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// `file` grown to `size` with a hole: nothing written, nothing to read back but zeros.
void grow(const fs::path& file, std::uint64_t size) {
  fs::resize_file(file, size);
}

TEST(ReadElf, AHugeFileThatIsNotElfIsRejectedWithoutReadingIt) {
  ScratchFile file;
  std::ofstream(file.path()) << "#!/bin/sh\necho not an ELF file\n";
  grow(file.path(), kHuge);
  const std::uint64_t before = bytes_read();
  EXPECT_FALSE(jail::rootfs::read_elf(file.path()).has_value());
  EXPECT_LT(bytes_read() - before, kFewReads);
}

TEST(ReadElf, AHugeBinaryGivesTheSameAnswerFromItsHeadersAlone) {
  const fs::path original = "/usr/bin/ls";
  const auto expected = jail::rootfs::read_elf(original);
  ASSERT_TRUE(expected.has_value());
  // Not vacuous: what the loader needs for ls on this machine.
  EXPECT_EQ(expected->interpreter, "/lib64/ld-linux-x86-64.so.2");
  EXPECT_NE(std::find(expected->needed.begin(), expected->needed.end(), "libc.so.6"),
            expected->needed.end());

  ScratchFile file;
  fs::copy_file(original, file.path(), fs::copy_options::overwrite_existing);
  grow(file.path(), kHuge);
  const std::uint64_t before = bytes_read();
  const auto info = jail::rootfs::read_elf(file.path());
  EXPECT_LT(bytes_read() - before, kFewReads);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->interpreter, expected->interpreter);
  EXPECT_EQ(info->needed, expected->needed);
  EXPECT_EQ(info->rpath, expected->rpath);
  EXPECT_EQ(info->runpath, expected->runpath);
}

TEST(ReadElf, ATruncatedElfFileIsAnErrorNamingIt) {
  ScratchFile file;
  fs::copy_file("/usr/bin/ls", file.path(), fs::copy_options::overwrite_existing);
  fs::resize_file(file.path(), 100);  // the ELF header, and the program headers cut off
  try {
    (void)jail::rootfs::read_elf(file.path());
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find(file.path().string()), std::string::npos)
        << error.what();
  }
}

}  // namespace
