// jail::run() under Stdio::pipe: the tool's output comes back in the Result, capped per stream,
// or streamed to callbacks; run() reads both streams to their end, so no amount of output can
// block the tool (a GiB here, with no timeout to fall back on but the test's own).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "jail/launch.hpp"
#include "library_support.hpp"
#include "temp_dir.hpp"

namespace {

using namespace std::chrono_literals;
using jail_test::shell;

constexpr std::uint64_t kGiB = 1ull << 30;

// A deadlock would show as this timeout, not as a hung test.
jail::Spec bounded(const std::string& script) {
  jail::Spec spec = shell(script);
  spec.limits.timeout = 120s;
  return spec;
}

TEST(LibraryRun, StdoutAndStderrComeBackInTheResult) {
  const jail::Result result = jail::run(bounded("echo out; echo err >&2; printf tail; exit 3"));
  EXPECT_EQ(result.outcome, jail::Outcome::exited) << jail::to_json(result);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.stdout_bytes, "out\ntail");
  EXPECT_EQ(result.stderr_bytes, "err\n");
  EXPECT_FALSE(result.stdout_truncated);
  EXPECT_FALSE(result.stderr_truncated);
}

TEST(LibraryRun, TheToolReadsEndOfFileOnItsStdin) {
  const jail::Result result = jail::run(bounded("cat; echo after-eof"));
  EXPECT_EQ(result.outcome, jail::Outcome::exited) << jail::to_json(result);
  EXPECT_EQ(result.stdout_bytes, "after-eof\n");
}

TEST(LibraryRun, AGibibyteOfOutputIsReadToItsEndAndKeptUpToTheCap) {
  const jail::Result result =
      jail::run(bounded("head -c " + std::to_string(kGiB) + " /dev/zero; echo done >&2"),
                jail::RunOutput::keep(1 << 20));
  EXPECT_EQ(result.outcome, jail::Outcome::exited) << jail::to_json(result);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.stdout_bytes.size(), 1u << 20);
  EXPECT_EQ(result.stdout_bytes.find_first_not_of('\0'), std::string::npos);
  EXPECT_TRUE(result.stdout_truncated);
  EXPECT_EQ(result.stderr_bytes, "done\n");
  EXPECT_FALSE(result.stderr_truncated);
}

TEST(LibraryRun, BothStreamsFloodingAtOnceCannotBlockEachOther) {
  const jail::Result result =
      jail::run(bounded("head -c 67108864 /dev/zero >&2 & head -c 67108864 /dev/zero; wait"),
                jail::RunOutput::keep(1024));
  EXPECT_EQ(result.outcome, jail::Outcome::exited) << jail::to_json(result);
  EXPECT_EQ(result.stdout_bytes.size(), 1024u);
  EXPECT_EQ(result.stderr_bytes.size(), 1024u);
  EXPECT_TRUE(result.stdout_truncated);
  EXPECT_TRUE(result.stderr_truncated);
}

TEST(LibraryRun, CallbacksGetEveryByteOfAGibibyteAsItComes) {
  std::uint64_t out_bytes = 0;
  std::string err_text;
  const jail::Result result = jail::run(
      bounded("head -c " + std::to_string(kGiB) + " /dev/zero; echo done >&2"),
      jail::RunOutput::streamed([&](std::string_view chunk) { out_bytes += chunk.size(); },
                                [&](std::string_view chunk) { err_text += chunk; }));
  EXPECT_EQ(result.outcome, jail::Outcome::exited) << jail::to_json(result);
  EXPECT_EQ(out_bytes, kGiB);
  EXPECT_EQ(err_text, "done\n");
  EXPECT_TRUE(result.stdout_bytes.empty()) << "a streamed stream is not kept as well";
}

// The readable constructors give the mounts they say: a read-only bind, a writable bind and a
// sized tmpfs.
TEST(LibraryRun, MountsMadeByNameAreTheMountsTheyName) {
  const jail::TempDir data("jail-test-run", std::filesystem::temp_directory_path());
  const jail::TempDir out("jail-test-run", std::filesystem::temp_directory_path());
  std::ofstream(data.path() / "hello") << "from the host\n";
  // The tool is not the test's uid (a root caller's runs as 1000): it needs to read and write.
  namespace fs = std::filesystem;
  fs::permissions(data.path(), fs::perms::owner_all | fs::perms::group_read |
                                   fs::perms::group_exec | fs::perms::others_read |
                                   fs::perms::others_exec);
  fs::permissions(data.path() / "hello", fs::perms::owner_read | fs::perms::owner_write |
                                             fs::perms::group_read | fs::perms::others_read);
  fs::permissions(out.path(), fs::perms::all);
  jail::Spec spec = bounded(
      "cat /data/hello; touch /data/new 2>/dev/null || echo read-only;"
      " echo kept > /out/file; df -k /scratch | tail -1 | awk '{print $2}'");
  spec.mounts = {jail::Mount::ro_bind(data.path(), "/data", "the test's data"),
                 jail::Mount::bind(out.path(), "/out"), jail::Mount::tmpfs("/scratch", 2 << 20)};
  const jail::Result result = jail::run(spec);
  EXPECT_EQ(result.outcome, jail::Outcome::exited) << jail::to_json(result) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "from the host\nread-only\n2048\n") << result.stderr_bytes;
  std::string kept;
  std::ifstream(out.path() / "file") >> kept;
  EXPECT_EQ(kept, "kept");
  const jail::Mount tmp = jail::Mount::tmpfs("/t");
  EXPECT_EQ(tmp.kind, jail::MountKind::tmpfs);
  EXPECT_TRUE(tmp.source.empty());
  EXPECT_FALSE(tmp.size_bytes);
}

TEST(LibraryRun, ATimeoutStillEndsARunThatIsReadingOutput) {
  jail::Spec spec = shell("echo started; exec sleep 600");
  spec.limits.timeout = 1s;
  const jail::Result result = jail::run(spec);
  EXPECT_EQ(result.outcome, jail::Outcome::timeout) << jail::to_json(result);
  EXPECT_EQ(result.stdout_bytes, "started\n");
}

}  // namespace
