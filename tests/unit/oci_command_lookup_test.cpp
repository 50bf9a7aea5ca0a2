// oci::write_bundle's BundleFacts::command_found: a command given as a path is looked up in the
// jail the bundle lays out — through its binds, tmpfs and links, "." and ".." as the jail takes
// them — never in the host's file system at the same path. runsc says "no such file" both for a
// missing command and for a missing #! interpreter; this fact is what tells the two apart.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "oci/bundle.hpp"

namespace {

namespace fs = std::filesystem;

class OciCommandLookup : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "jail-test-lookup-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    fs::create_directory(dir_ / "work");
    std::ofstream(dir_ / "work/tool.sh") << "#!/bin/sh\ntrue\n";
    // Present on the host, outside every mount of the jail.
    std::ofstream(dir_ / "host-only") << "not in the jail\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Whether write_bundle finds `command` in a jail with dir_/work bound at /work and a tmpfs
  // at /scratch, started in `cwd`.
  bool found(const std::string& command, const std::string& cwd = "/work") {
    jail::Spec spec;
    spec.argv = {command};
    spec.cwd = cwd;
    spec.mounts.push_back(
        {jail::MountKind::ro_bind, (dir_ / "work").string(), "/work", std::nullopt, "--ro-bind"});
    spec.mounts.push_back({jail::MountKind::tmpfs, "", "/scratch", std::nullopt, "--tmpfs"});
    const fs::path bundle = dir_ / ("bundle" + std::to_string(++bundles_));
    return jail::oci::write_bundle(spec, bundle, {}, jail::oci::BundleUse::run_once).command_found;
  }

  fs::path dir_;
  int bundles_ = 0;
};

TEST_F(OciCommandLookup, AFileInABindIsFound) {
  EXPECT_TRUE(found("/work/tool.sh"));
  EXPECT_FALSE(found("/work/missing.sh"));
}

TEST_F(OciCommandLookup, ARelativePathStartsAtTheWorkingDirectory) {
  EXPECT_TRUE(found("./tool.sh"));
  EXPECT_TRUE(found("../work/tool.sh"));
  EXPECT_FALSE(found("./tool.sh", "/scratch"));
}

TEST_F(OciCommandLookup, DotDotIsTakenInTheJailNotOnTheBindsHostSource) {
  // On the host, dir_/work/../host-only exists; in the jail /work/.. is the jail's root.
  ASSERT_TRUE(fs::exists(dir_ / "work/../host-only"));
  EXPECT_FALSE(found("/work/../host-only"));
  EXPECT_TRUE(found("/work/../usr/bin/env"));
}

TEST_F(OciCommandLookup, TheHostMinimalRootsLinksAreFollowed) {
  // /bin is a link to usr/bin in the host-minimal root.
  EXPECT_TRUE(found("/bin/sh"));
  EXPECT_FALSE(found("/bin/no-such-tool-in-any-jail"));
}

TEST_F(OciCommandLookup, AnAbsoluteLinkIsFollowedFromTheJailsRoot) {
  fs::create_symlink("/usr/bin/env", dir_ / "work/to-env");
  fs::create_symlink(dir_ / "host-only", dir_ / "work/to-host");
  EXPECT_TRUE(found("/work/to-env"));
  EXPECT_FALSE(found("/work/to-host")) << "a link was followed on the host";
}

TEST_F(OciCommandLookup, ADanglingLinkIsNotAFile) {
  fs::create_symlink("nowhere", dir_ / "work/dangling");
  EXPECT_FALSE(found("/work/dangling"));
}

TEST_F(OciCommandLookup, ATmpfsHoldsNothingAtTheStart) {
  EXPECT_FALSE(found("/scratch/tool.sh"));
}

TEST_F(OciCommandLookup, AProcPathIsNotTakenForFound) {
  // What runsc's procfs holds is not known before the sandbox starts.
  EXPECT_FALSE(found("/proc/self/exe"));
}

TEST_F(OciCommandLookup, ABareNameIsLeftToTheRuntimesPathSearch) {
  EXPECT_TRUE(found("no-such-tool-in-any-jail"));
}

}  // namespace
