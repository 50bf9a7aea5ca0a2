#include "runsc_fixture.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <filesystem>

namespace jail_test {

struct stat null_device() {
  struct stat info {};
  ::stat("/dev/null", &info);
  return info;
}

std::set<std::string> runsc_dirs() {
  std::set<std::string> found;
  for (const std::filesystem::path& dir :
       {std::filesystem::temp_directory_path(), std::filesystem::path("/dev/shm")}) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
      if (entry.path().filename().string().starts_with("jail-runsc-")) found.insert(entry.path());
    }
  }
  return found;
}

namespace {

// Whether the jail named in a run directory (jail-runsc-<pid>-XXXXXX) is still running; false
// for a name without a pid.
bool jail_of_run_dir_alive(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename();
  const std::string_view rest =
      std::string_view(name).substr(std::string_view("jail-runsc-").size());
  pid_t pid = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
  if (error != std::errc() || pid <= 0 || end == rest.data() + rest.size() || *end != '-') {
    return false;
  }
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

}  // namespace

void Runsc::SetUp() {
  if (::geteuid() != 0) GTEST_FAIL() << "runsc runs need root; this suite runs as root in CI";
  if (!std::filesystem::exists("/usr/bin/runsc")) {
    GTEST_FAIL()
        << "runsc is not installed; scripts/install-deps.sh installs the Debian package runsc";
  }
  before_ = runsc_dirs();
  null_before_ = null_device();
}

void Runsc::TearDown() {
  for (const std::string& dir : runsc_dirs()) {
    if (!before_.contains(dir) && !jail_of_run_dir_alive(dir)) {
      ADD_FAILURE() << "a runsc bundle or state dir was left behind: " << dir;
    }
  }
  const struct stat null_after = null_device();
  EXPECT_EQ(null_after.st_uid, null_before_.st_uid) << "a run chowned the host's /dev/null";
  EXPECT_EQ(null_after.st_gid, null_before_.st_gid) << "a run chowned the host's /dev/null";
  // Put back, so that one failure here does not leave the host changed.
  if (null_after.st_uid != null_before_.st_uid || null_after.st_gid != null_before_.st_gid)
    (void)::chown("/dev/null", null_before_.st_uid, null_before_.st_gid);
}

RunResult Runsc::runsc(std::vector<std::string> args, RunOptions options) {
  args.insert(args.begin(), {"--runtime", "runsc"});
  return run_jail(args, options);
}

std::string run_exported_bundle(const std::string& bundle, const std::string& state) {
  // runsc names its control socket after the container id in the abstract namespace, which is
  // host-wide: tests that run at once need ids of their own, not just state dirs of their own.
  static int runs = 0;
  const std::string id =
      "jail-export-test-" + std::to_string(::getpid()) + "-" + std::to_string(++runs);
  const std::string command =
      // Its stdin a pipe: runsc chowns its stdio to nobody, and the test's may be /dev/null.
      "cd " + bundle + " && : | runsc --root " + state +
      " --network=none --platform=ptrace --ignore-cgroups --oci-seccomp run " + id + " 2>&1;" +
      " runsc --root " + state + " delete --force " + id + " >/dev/null 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  std::string out;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  ::pclose(pipe);
  return out;
}

}  // namespace jail_test
