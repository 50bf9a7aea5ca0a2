// Issue 4, the per-process limits and the sized tmpfs mounts through the real binary, for a root
// and an unprivileged caller: --max-file-size (EFBIG, or death by SIGXFSZ named file_size),
// --tmpfs-size and --tmpfs DST:SIZE (ENOSPC), --max-open-files (EMFILE), --rlimit, core dumps off
// by default, and no hidden limits on a run with no flags.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_jail.hpp"

namespace jail_test {
namespace {

using nlohmann::json;

constexpr long long kMiB = 1024 * 1024;

double number(const json& s, const char* key) {
  if (!s.is_object() || !s.contains(key) || !s[key].is_number()) return -1;
  return s[key].get<double>();
}

std::string text(const json& s, const char* key) {
  if (!s.is_object() || !s.contains(key) || !s[key].is_string()) return "<not a string>";
  return s[key].get<std::string>();
}

// "key value" lines of a probe's output, as a map.
std::map<std::string, std::string> fields(const std::string& out) {
  std::map<std::string, std::string> result;
  for (const std::string& line : split_lines(out)) {
    std::size_t space = line.find(' ');
    if (space != std::string::npos) result[line.substr(0, space)] = line.substr(space + 1);
  }
  return result;
}

// The line of /proc/self/limits (as printed inside the jail) that starts with `name`.
std::string limits_line(const std::string& proc_limits, const std::string& name) {
  for (const std::string& line : split_lines(proc_limits)) {
    if (line.starts_with(name)) return line;
  }
  return "<no line '" + name + "'>";
}

// The soft and hard columns of such a line, e.g. {"100", "100"}.
std::pair<std::string, std::string> soft_hard(const std::string& line, const std::string& name) {
  std::istringstream rest(line.size() > name.size() ? line.substr(name.size()) : "");
  std::string soft, hard;
  rest >> soft >> hard;
  return {soft, hard};
}

class LimitsRlimits : public CallerTest {
 protected:
  struct Run {
    RunResult result;
    json status;
  };

  Run run_status(const std::vector<std::string>& args) {
    Run r;
    std::string path = status_dir_ / "status.json";
    std::remove(path.c_str());
    r.result = run(concat({probe_mount(), {"--status-file", path}, args}));
    std::optional<std::string> content = read_file(path);
    if (content) {
      json parsed = json::parse(*content, nullptr, false);
      if (!parsed.is_discarded()) r.status = parsed;
    }
    return r;
  }

  TempDir status_dir_;
};

TEST_P(LimitsRlimits, LargeWriteStopsWithEfbigWhenSigxfszIsIgnored) {
  Run r = run_status({"--max-file-size", "1M", "--", probe("lim_write"), "--ignore-sigxfsz",
                      "/tmp/big", std::to_string(2 * kMiB)});
  auto f = fields(r.result.out);
  EXPECT_EQ(r.result.exit_code, 0) << describe(r.result);
  EXPECT_EQ(f["result"], "EFBIG") << describe(r.result);
  EXPECT_EQ(f["wrote"], std::to_string(kMiB)) << describe(r.result);
  EXPECT_EQ(number(r.status["limits"], "max_file_size"), kMiB) << r.status.dump();
  EXPECT_EQ(text(r.status, "outcome"), "exited") << r.status.dump();
}

TEST_P(LimitsRlimits, PythonSeesErrno27) {
  // python3 ignores SIGXFSZ itself, so the write fails with OSError EFBIG (27).
  Run r = run_status({"--max-file-size", "1M", "--", "python3", "-c",
                      "import os\n"
                      "try:\n"
                      "    open('/tmp/big', 'wb').write(b'x' * (2 << 20))\n"
                      "    print('no error')\n"
                      "except OSError as e:\n"
                      "    print('errno', e.errno)\n"
                      "print('size', os.path.getsize('/tmp/big'))\n"});
  auto f = fields(r.result.out);
  EXPECT_EQ(r.result.exit_code, 0) << describe(r.result);
  EXPECT_EQ(f["errno"], "27") << describe(r.result);
  EXPECT_EQ(f["size"], std::to_string(kMiB)) << describe(r.result);
}

TEST_P(LimitsRlimits, LargeWriteKillsWithSigxfszNamedFileSize) {
  Run r = run_status(
      {"--max-file-size", "1M", "--", probe("lim_write"), "/tmp/big", std::to_string(2 * kMiB)});
  const json& s = r.status;
  EXPECT_EQ(r.result.exit_code, 128 + SIGXFSZ) << describe(r.result);
  EXPECT_EQ(r.result.out.find("result"), std::string::npos) << "the probe survived the limit";
  EXPECT_EQ(text(s, "outcome"), "signaled") << s.dump();
  EXPECT_EQ(number(s, "signal"), SIGXFSZ) << s.dump();
  EXPECT_EQ(text(s, "limit_hit"), "file_size") << s.dump();
  EXPECT_TRUE(s["exit_code"].is_null()) << s.dump();
}

TEST_P(LimitsRlimits, TmpFillStopsAtTmpfsSize) {
  Run r = run_status(
      {"--tmpfs-size", "8M", "--", probe("lim_write"), "/tmp/fill", std::to_string(20 * kMiB)});
  auto f = fields(r.result.out);
  long long wrote = std::atoll(f["wrote"].c_str());
  std::printf("[ measured ] /tmp of 8M took %lld bytes before %s\n", wrote, f["result"].c_str());
  EXPECT_EQ(r.result.exit_code, 0) << describe(r.result);
  EXPECT_EQ(f["result"], "ENOSPC") << describe(r.result);
  EXPECT_LE(wrote, 8 * kMiB) << describe(r.result);
  EXPECT_GE(wrote, 7 * kMiB) << describe(r.result);
}

TEST_P(LimitsRlimits, SizedTmpfsMountStopsAtItsSize) {
  Run r = run_status(
      {"--tmpfs", "/data:4M", "--", probe("lim_write"), "/data/fill", std::to_string(20 * kMiB)});
  auto f = fields(r.result.out);
  long long wrote = std::atoll(f["wrote"].c_str());
  EXPECT_EQ(r.result.exit_code, 0) << describe(r.result);
  EXPECT_EQ(f["result"], "ENOSPC") << describe(r.result);
  EXPECT_LE(wrote, 4 * kMiB) << describe(r.result);
  EXPECT_GE(wrote, 3 * kMiB) << describe(r.result);
}

TEST_P(LimitsRlimits, SeventeenthOpenFailsWithEmfile) {
  Run r = run_status({"--max-open-files", "16", "--", probe("lim_nofile")});
  auto f = fields(r.result.out);
  EXPECT_EQ(r.result.exit_code, 0) << describe(r.result);
  EXPECT_EQ(f["result"], "EMFILE") << describe(r.result);
  // 0, 1 and 2 are open, so descriptors 3..15 succeed and the 17th (fd 16) fails.
  EXPECT_EQ(f["last_fd"], "15") << describe(r.result);
  EXPECT_EQ(f["opened"], "13") << describe(r.result);
  EXPECT_EQ(number(r.status["limits"], "max_open_files"), 16) << r.status.dump();
}

TEST_P(LimitsRlimits, RlimitsAreAppliedAndEchoed) {
  Run r = run_status({"--rlimit", "nproc=100", "--rlimit", "core=0:0", "--rlimit",
                      "stack=4194304:8388608", "--", "cat", "/proc/self/limits"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r.result);
  const json& rl = r.status["limits"]["rlimits"];
  EXPECT_EQ(rl["nproc"], json::array({100, 100})) << r.status.dump();
  EXPECT_EQ(rl["core"], json::array({0, 0})) << r.status.dump();
  EXPECT_EQ(rl["stack"], json::array({4194304, 8388608})) << r.status.dump();
  // And the kernel holds them for the tool.
  const std::string& out = r.result.out;
  EXPECT_EQ(soft_hard(limits_line(out, "Max processes"), "Max processes"),
            std::make_pair(std::string("100"), std::string("100")))
      << out;
  EXPECT_EQ(soft_hard(limits_line(out, "Max stack size"), "Max stack size"),
            std::make_pair(std::string("4194304"), std::string("8388608")))
      << out;
}

TEST_P(LimitsRlimits, UnknownRlimitNameIsASetupErrorListingTheNames) {
  Run r = run_status({"--rlimit", "bogus=3", "--", "sh", "-c", "echo ran"});
  EXPECT_EQ(r.result.exit_code, 125) << describe(r.result);
  EXPECT_EQ(r.result.out.find("ran"), std::string::npos) << describe(r.result);
  EXPECT_NE(r.result.err.find("bogus"), std::string::npos) << describe(r.result);
  for (const char* name : {"core", "cpu", "fsize", "nofile", "nproc", "stack"}) {
    EXPECT_NE(r.result.err.find(std::string(" ") + name), std::string::npos)
        << "the message should list '" << name << "'\n"
        << describe(r.result);
  }
}

TEST_P(LimitsRlimits, CoreDumpsAreOffByDefault) {
  Run r = run_status({"--", "sh", "-c", "ulimit -c; ulimit -H -c; cat /proc/self/limits"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r.result);
  auto lines = split_lines(r.result.out);
  ASSERT_GE(lines.size(), 2u) << describe(r.result);
  EXPECT_EQ(lines[0], "0") << describe(r.result);
  EXPECT_EQ(lines[1], "0") << describe(r.result);
  EXPECT_EQ(soft_hard(limits_line(r.result.out, "Max core file size"), "Max core file size"),
            std::make_pair(std::string("0"), std::string("0")))
      << r.result.out;
  EXPECT_EQ(r.status["limits"]["core_dumps"], false) << r.status.dump();
}

TEST_P(LimitsRlimits, NoFlagsMeansNoHiddenLimits) {
  Run r = run_status({"--", "cat", "/proc/self/limits"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r.result);
  const json& l = r.status["limits"];
  for (const char* key : {"memory_bytes", "pids", "cpus", "timeout_ms", "cpu_time_s",
                          "max_file_size", "max_open_files"}) {
    EXPECT_TRUE(l.contains(key) && l[key].is_null()) << key << " in " << r.status.dump();
  }
  EXPECT_EQ(number(l, "kill_grace_ms"), 2000) << r.status.dump();
  EXPECT_TRUE(r.status["limit_hit"].is_null()) << r.status.dump();
  // None of nsjail's surprises: no file-size cap, no address-space cap, no cpu-time cap.
  const std::string& out = r.result.out;
  EXPECT_EQ(soft_hard(limits_line(out, "Max file size"), "Max file size").first, "unlimited")
      << out;
  EXPECT_EQ(soft_hard(limits_line(out, "Max address space"), "Max address space").first,
            "unlimited")
      << out;
  EXPECT_EQ(soft_hard(limits_line(out, "Max cpu time"), "Max cpu time").first, "unlimited") << out;
}

JAIL_INSTANTIATE_FOR_CALLERS(LimitsRlimits);

}  // namespace
}  // namespace jail_test
