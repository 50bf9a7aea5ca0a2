// oci::write_bundle: a bundle laid out next to the host's /etc leaves the host's files as they
// were, whatever the caller's binds cover.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "oci/bundle.hpp"

namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A --bind over an /etc entry of the host-minimal root: the mount point in the rootfs is that
// entry's. When run-once bundles carried copies of /etc entries it once was a hard link to the
// host's file, opened with O_TRUNC — which emptied the host's /etc/issue whenever the bundle was
// on the root file system ($TMPDIR there). The rootfs holds only empty mount points now.
TEST(OciBundle, ABindOverAnEtcEntryOfTheRootLeavesTheHostsFileWhole) {
  const fs::path host_file = "/etc/issue";
  struct stat host {};
  if (::stat(host_file.c_str(), &host) != 0 || !S_ISREG(host.st_mode)) {
    GTEST_SKIP() << host_file << " is not a regular file here: nothing of the host's to inline";
  }
  // The bundle on the same file system as /etc, as with TMPDIR=/var/tmp on a one-disk host.
  std::string pattern = "/var/tmp/jail-bundle-test-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const fs::path dir = pattern;
  struct stat var_tmp {};
  ASSERT_EQ(::stat(dir.c_str(), &var_tmp), 0);
  if (var_tmp.st_dev != host.st_dev) {
    fs::remove_all(dir);
    GTEST_SKIP() << "/var/tmp and /etc are on different file systems here: no link was possible";
  }
  const std::string before = read(host_file);
  std::ofstream(dir / "mine") << "the caller's issue\n";

  jail::Spec spec;
  spec.argv = {"true"};
  spec.mounts.push_back(
      {jail::MountKind::ro_bind, (dir / "mine").string(), "/etc/issue", std::nullopt, "--ro-bind"});
  jail::oci::write_bundle(spec, dir / "bundle", {}, jail::oci::BundleUse::run_once);

  const std::string after = read(host_file);
  if (after != before) std::ofstream(host_file, std::ios::binary | std::ios::trunc) << before;
  EXPECT_EQ(after, before) << "the host's " << host_file << " was changed (put back)";
  struct stat in_bundle {};
  ASSERT_EQ(::stat((dir / "bundle/rootfs/etc/issue").c_str(), &in_bundle), 0);
  EXPECT_NE(in_bundle.st_ino, host.st_ino) << "the rootfs holds the host's own inode";
  fs::remove_all(dir);
}

}  // namespace
