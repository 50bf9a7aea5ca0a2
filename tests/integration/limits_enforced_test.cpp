// The status JSON's limits_enforced: how each limit asked for was held, so that a record says
// what "--memory" meant in that run — the jail's cgroup for the whole jail, an rlimit per
// process, or the supervisor — in the full jail and in the Landlock mode, where a limit that
// needs a cgroup the caller cannot make is refused rather than held some weaker way.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_jail.hpp"

namespace jail_test {
namespace {

using json = nlohmann::json;

TEST(LimitsEnforced, TheFullJailSaysWhichLimitTheCgroupHoldsAndWhichAnRlimit) {
  TempDir dir;
  const RunResult result =
      run_jail({"--no-cwd", "--status-file", dir / "status.json", "--memory", "256M", "--pids",
                "64", "--timeout", "20s", "--cpu-time", "10", "--max-open-files", "100", "--rlimit",
                "nproc=500", "--", "true"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  const json status = json::parse(read_file(dir / "status.json").value_or("{}"));
  const json& how = status["limits_enforced"];
  EXPECT_EQ(how["memory_bytes"].get<std::string>().rfind("cgroup v", 0), 0u) << how.dump(2);
  EXPECT_NE(how["memory_bytes"].get<std::string>().find("the whole jail"), std::string::npos);
  EXPECT_EQ(how["pids"].get<std::string>().rfind("cgroup v", 0), 0u) << how.dump(2);
  EXPECT_EQ(how["timeout_ms"].get<std::string>().rfind("supervisor", 0), 0u) << how.dump(2);
  EXPECT_EQ(how["cpu_time_s"], "RLIMIT_CPU, each process of the tool") << how.dump(2);
  EXPECT_EQ(how["max_open_files"], "RLIMIT_NOFILE, each process of the tool") << how.dump(2);
  EXPECT_EQ(how["rlimits.nproc"], "RLIMIT_NPROC, each process of the tool") << how.dump(2);
  EXPECT_FALSE(how.contains("cpus")) << "a limit not asked for is not listed: " << how.dump(2);
}

TEST(LimitsEnforced, TheLandlockModeHoldsRlimitsAndRefusesACgroupLimitItCannotMake) {
  TempDir dir;
  RunOptions options;
  options.caller = Caller::unprivileged;
  options.wrapper = {std::string(JAIL_PROBE_DIR) + "/no_userns"};
  const RunResult result =
      run_jail({"--no-cwd", "--status-file", dir / "status.json", "--cpu-time", "10", "--", "true"},
               options);
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  const json status = json::parse(read_file(dir / "status.json").value_or("{}"));
  EXPECT_EQ(status["isolation"], "landlock") << status.dump(2);
  EXPECT_EQ(status["limits_enforced"],
            json({{"cpu_time_s", "RLIMIT_CPU, each process of the tool"}}))
      << status.dump(2);
  // No cgroup of its own here: --memory fails the run, it is never held per process instead.
  const RunResult memory = run_jail({"--no-cwd", "--memory", "256M", "--", "true"}, options);
  EXPECT_EQ(memory.exit_code, 125) << describe(memory);
  EXPECT_NE(memory.err.find("cgroup"), std::string::npos) << describe(memory);
}

}  // namespace
}  // namespace jail_test
