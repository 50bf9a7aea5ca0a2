// The SHA-256 digests of dry-run manifests (and, with the same library, the audit log) against
// FIPS 180-2's published vectors: a digest that drifted would report every host file as changed.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "dry_run/digest.hpp"
#include "jail/error.hpp"

namespace jail::dry_run {
namespace {

TEST(Digest, TextMatchesThePublishedVectors) {
  EXPECT_EQ(sha256_of_text(""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_of_text("abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// A million 'a's, read in several 64 KiB chunks, from where the fd's offset stands.
TEST(Digest, FdIsReadFromItsOffsetToTheEnd) {
  char path[] = "/tmp/jail-test-digest-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::unlink(path);
  const std::string prefix = "skipped";
  const std::string million(1000000, 'a');
  ASSERT_EQ(::write(fd, prefix.data(), prefix.size()), static_cast<ssize_t>(prefix.size()));
  ASSERT_EQ(::write(fd, million.data(), million.size()), static_cast<ssize_t>(million.size()));
  ASSERT_EQ(::lseek(fd, static_cast<off_t>(prefix.size()), SEEK_SET),
            static_cast<off_t>(prefix.size()));
  EXPECT_EQ(sha256_of_fd(fd, "a test file"),
            "sha256:cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  ::close(fd);
  EXPECT_THROW((void)sha256_of_fd(fd, "a closed fd"), jail::Error);
}

}  // namespace
}  // namespace jail::dry_run
