// What the --runtime runsc suites share: the fixture that checks a run leaves nothing behind,
// and `runsc run` of an exported bundle as a user runs it by hand.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <set>
#include <string>
#include <vector>

#include "run_jail.hpp"

namespace jail_test {

// The host's /dev/null: every run here gets it as stdin unless a test gives another.
struct stat null_device();

// What jail leaves while a runsc run is alive: its bundle and state, in /dev/shm (a tmpfs) or the
// temp directory (oci::run_bundle_parent), named jail-runsc-<jail's pid>-XXXXXX; full paths.
std::set<std::string> runsc_dirs();

// Needs root and the real runsc; fails (does not skip) without them. After each test: no bundle
// or state dir left, and the host's /dev/null still its owner's. A directory counts as left when
// it is new and its jail has ended: runs of tests in parallel (ctest -j) still have theirs.
class Runsc : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  RunResult runsc(std::vector<std::string> args, RunOptions options = {});

  std::set<std::string> before_;
  struct stat null_before_ {};
};

// `runsc run` of a bundle from `jail export-oci` in `bundle`, with its state in `state`, as a
// user runs it by hand (--oci-seccomp, no network); its output and runsc's, and it is deleted.
std::string run_exported_bundle(const std::string& bundle, const std::string& state);

}  // namespace jail_test
