// Only real denials are denials: the baseline's clone3 → ENOSYS, which every new thread meets
// (glibc then falls back to clone), is answered in the kernel, so a threaded tool under the
// default policy reports nothing; a refusal nobody expected still is.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "run_jail.hpp"

namespace jail_test {
namespace {

using nlohmann::json;

constexpr const char* kTwentyThreads =
    "import threading\n"
    "done = []\n"
    "threads = [threading.Thread(target=done.append, args=(i,)) for i in range(20)]\n"
    "for t in threads: t.start()\n"
    "for t in threads: t.join()\n"
    "print(len(done), 'threads ran')\n";

class QuietRefusals : public CallerTest {};

TEST_P(QuietRefusals, ATwentyThreadPythonRunHasNoDenials) {
  TempDir work;
  const std::string status = work / "status.json";
  RunResult r = run({"--status-file", status, "--no-cwd", "--", "python3", "-c", kTwentyThreads});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "20 threads ran\n") << describe(r);
  EXPECT_EQ(r.err.find("denied"), std::string::npos) << describe(r);
  const json s = json::parse(read_file(status).value_or("{}"));
  EXPECT_EQ(s["denials"]["count"], 0) << s.dump();
  EXPECT_TRUE(s["denials"]["first"].empty()) << s.dump();
}

TEST_P(QuietRefusals, ARefusalNobodyExpectedIsStillReported) {
  TempDir work;
  const std::string status = work / "status.json";
  // sethostname: errno EPERM under the default policy, and no tool meets it by accident.
  RunResult r = run({"--status-file", status, "--no-cwd", "--", "python3", "-c",
                     "import socket\ntry:\n    socket.sethostname('x')\nexcept OSError as e:\n"
                     "    print(e.errno)\n"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "1\n") << describe(r);
  EXPECT_NE(r.err.find("denied sethostname"), std::string::npos) << describe(r);
  const json s = json::parse(read_file(status).value_or("{}"));
  EXPECT_EQ(s["denials"]["count"], 1) << s.dump();
}

JAIL_INSTANTIATE_FOR_CALLERS(QuietRefusals);

}  // namespace
}  // namespace jail_test
