// Spec::lookups through the library: the Result names the paths the tool looked up (absolute,
// relative ones joined to the cwd or to the directory fd they started from), while the policy's
// decisions stay exactly what they were — an allowed lookup is not a denial, a refused one is.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "jail/launch.hpp"

namespace {

jail::Spec traced_shell(const std::string& script) {
  jail::Spec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.env = jail::default_environment();
  spec.input = jail::Input::none;
  spec.lookups = jail::LookupTrace::record;
  return spec;
}

const jail::FileLookup* find(const jail::Result& result, const std::string& path) {
  if (!result.lookups) return nullptr;
  for (const auto& lookup : result.lookups->paths) {
    if (lookup.path == path) return &lookup;
  }
  return nullptr;
}

std::string listing(const jail::Result& result) {
  std::string text;
  if (!result.lookups) return "(no lookups recorded)";
  for (const auto& lookup : result.lookups->paths)
    text += lookup.syscall + " " + lookup.path + "\n";
  return text;
}

TEST(LookupTrace, AbsoluteRelativeAndDirfdPathsAreRecordedAndStillRun) {
  // cat opens an absolute path; after cd, ls looks up a relative one; find walks /etc/ssl with
  // fts, which looks entries up relative to a directory fd.
  const jail::Result result = jail::run(traced_shell(
      "cat /etc/hostname >/dev/null && cd /usr && ls share/jail-no-such-file 2>/dev/null; "
      "find /etc/ssl -maxdepth 1 -name certs >/dev/null; cat /tmp/jail-absent /proc/self/stat "
      ">/dev/null 2>&1; exit 7"));
  ASSERT_EQ(result.outcome, jail::Outcome::exited) << (result.error ? result.error->message : "");
  EXPECT_EQ(result.exit_code, 7);
  ASSERT_TRUE(result.lookups.has_value());
  EXPECT_NE(find(result, "/etc/hostname"), nullptr) << listing(result);
  EXPECT_NE(find(result, "/usr/share/jail-no-such-file"), nullptr) << listing(result);
  EXPECT_NE(find(result, "/etc/ssl/certs"), nullptr) << listing(result);
  // Allowed lookups pass the supervisor without being counted or reported as denials.
  EXPECT_EQ(result.denials.count, 0u);
  for (const auto& lookup : result.lookups->paths) {
    EXPECT_EQ(lookup.path.front(), '/') << lookup.path;
    EXPECT_EQ(lookup.path.find("/./"), std::string::npos) << lookup.path;
  }
  EXPECT_EQ(result.lookups->unreadable, 0u) << listing(result);
  // What the jail mounts itself is counted, not listed.
  EXPECT_EQ(find(result, "/tmp/jail-absent"), nullptr) << listing(result);
  EXPECT_EQ(find(result, "/proc/self/stat"), nullptr) << listing(result);
  EXPECT_GE(result.lookups->under_jail_mounts, 2u);
}

TEST(LookupTrace, ARefusedLookupIsRecordedAndStillRefused) {
  const std::string policy_path =
      "/var/tmp/jail-lookup-trace-" + std::to_string(::getpid()) + ".policy";
  std::ofstream(policy_path) << "errno EACCES readlink readlinkat\ninclude \"default\"\n";
  jail::Spec spec = traced_shell("readlink /etc/jail-some-link; echo \"status $?\"");
  spec.policy = policy_path;
  spec.stdio = jail::Stdio::pipe;
  jail::Process process = jail::launch(spec);
  process.close_stdin();
  // Non-blocking: wait_for is what answers the traced lookups, so a read blocking on an empty
  // pipe while the tool waits for an answer would never end (seen in the ASan build, where the
  // tool is slower than the 20 ms wait).
  ::fcntl(process.stdout_fd(), F_SETFL, ::fcntl(process.stdout_fd(), F_GETFL) | O_NONBLOCK);
  std::string out;
  std::optional<jail::Result> result;
  char buffer[256];
  while (!result) {
    result = process.wait_for(std::chrono::milliseconds(20));
    ssize_t n;
    while ((n = ::read(process.stdout_fd(), buffer, sizeof buffer)) > 0) out.append(buffer, n);
  }
  std::filesystem::remove(policy_path);
  ASSERT_EQ(result->outcome, jail::Outcome::exited)
      << (result->error ? result->error->message : "");
  EXPECT_NE(out.find("status 1"), std::string::npos) << out;
  EXPECT_GE(result->denials.count, 1u);
  ASSERT_FALSE(result->denials.first.empty());
  EXPECT_EQ(result->denials.first.front().syscall.rfind("readlink", 0), 0u)
      << result->denials.first.front().syscall;
  EXPECT_NE(find(*result, "/etc/jail-some-link"), nullptr) << listing(*result);
}

TEST(LookupTrace, OffRecordsNothing) {
  jail::Spec spec = traced_shell("cat /etc/hostname >/dev/null");
  spec.lookups = jail::LookupTrace::off;
  const jail::Result result = jail::run(spec);
  EXPECT_EQ(result.outcome, jail::Outcome::exited);
  EXPECT_FALSE(result.lookups.has_value());
}

TEST(LookupTrace, NeedsAPolicyAndTheNativeRuntime) {
  jail::Spec spec = traced_shell("true");
  spec.policy = "none";
  jail::Result result = jail::run(spec);
  EXPECT_EQ(result.outcome, jail::Outcome::setup_error);
  ASSERT_TRUE(result.error.has_value());
  EXPECT_NE(result.error->message.find("needs a seccomp policy"), std::string::npos)
      << result.error->message;

  spec = traced_shell("true");
  spec.runtime = jail::Runtime::runsc;
  result = jail::run(spec);
  EXPECT_EQ(result.outcome, jail::Outcome::setup_error);
  ASSERT_TRUE(result.error.has_value());
  EXPECT_NE(result.error->message.find("needs the native runtime"), std::string::npos)
      << result.error->message;
}

}  // namespace
