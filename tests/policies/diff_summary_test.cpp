// `jail policy diff --summary`: the full diff's changes counted per category, the dangerous
// syscalls a change widens named, short enough to read on one screen.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "policy/categories.hpp"
#include "policy/diff.hpp"
#include "policy/tools.hpp"
#include "policy_cli.hpp"
#include "policy_command.hpp"

namespace jail::policy {
namespace {

using policy_test::CliRun;

CliRun summary(std::vector<std::string> words) {
  words.insert(words.begin(), {"diff", "--summary"});
  return policy_test::run_policy_cli(std::move(words));
}

// category key → change kind → count, from the full diff's own per-syscall verdicts.
using Counts = std::map<std::string, std::map<std::string, std::size_t>>;

Counts expected_counts(const PolicyDiff& d) {
  Counts out;
  for (Category c : kCategories)
    for (const char* kind : {"wider", "narrower", "mixed", "changed", "restated"})
      out[std::string(to_string(c))][kind] = 0;
  for (const SyscallChange& s : d.syscalls) {
    auto category = category_of(s.syscall);
    EXPECT_TRUE(category.has_value()) << s.syscall;
    ++out[std::string(to_string(category.value_or(Category::system)))]
         [std::string(to_string(s.change))];
  }
  return out;
}

std::string line_of(const std::string& text, std::string_view title) {
  std::size_t at = text.find("\n" + std::string(title) + " ");
  if (at == std::string::npos) return "";
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

void expect_summary_matches_diff(const std::string& before, const std::string& after,
                                 int exit_code) {
  SCOPED_TRACE(before + " → " + after);
  const PolicyDiff d = diff(load_policy(before), load_policy(after));
  CliRun json = summary({before, after, "--format", "json"});
  ASSERT_EQ(json.code, exit_code) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["wider"], d.wider());
  EXPECT_EQ(j["narrower"], d.narrower());
  Counts got;
  for (const auto& [key, row] : j["categories"].items())
    for (const char* kind : {"wider", "narrower", "mixed", "changed", "restated"}) {
      got[key][kind] = row[kind].get<std::size_t>();
      EXPECT_EQ(row["syscalls"][kind].size(), got[key][kind]) << key << " " << kind;
    }
  EXPECT_EQ(got, expected_counts(d));

  CliRun text = summary({before, after});
  ASSERT_EQ(text.code, exit_code) << text.err;
  EXPECT_NE(text.out.find(diff_verdict_text(d)), std::string::npos) << text.out;
  // Every dangerous syscall made wider is in the JSON; one AFTER lets run is named in the text.
  for (const SyscallChange& s : d.syscalls) {
    if (!s.widened || !is_dangerous_syscall(s.syscall)) continue;
    const std::string key(to_string(*category_of(s.syscall)));
    const auto& named = j["categories"][key]["dangerous_wider"];
    EXPECT_NE(std::find(named.begin(), named.end(), s.syscall), named.end()) << s.syscall;
    if (!s.runs_now) continue;
    EXPECT_NE(line_of(text.out, title(*category_of(s.syscall))).find(s.syscall), std::string::npos)
        << s.syscall << "\n"
        << text.out;
  }
}

TEST(DiffSummary, CountsPerCategoryAreTheFullDiffs) {
  expect_summary_matches_diff("default", "python", 0);
  expect_summary_matches_diff("python", "default", 1);
  expect_summary_matches_diff("minimal", "default", 1);
}

TEST(DiffSummary, PythonAgainstDefaultFitsOnAScreen) {
  for (const auto& [before, after] : {std::pair{"python", "default"}, {"default", "python"}}) {
    CliRun r = summary({before, after});
    EXPECT_LE(std::count(r.out.begin(), r.out.end(), '\n'), 20) << r.out;
    for (Category c : kCategories)
      EXPECT_NE(line_of(r.out, title(c)), "") << title(c) << "\n" << r.out;
  }
}

class DiffSummaryFiles : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& body) {
    return scratch_.write(name, body);
  }
  policy_test::ScratchDir scratch_;
  const std::string& dir_ = scratch_.path();
};

// A learned policy's `default errno EPERM` turns python's kills of 39 dangerous calls into errno:
// wider, though none runs. They are counted past a few names, so each line stays readable.
TEST_F(DiffSummaryFiles, ManyDangerousCallsStillRefusedKeepTheLinesShort) {
  std::string learned =
      write("learned.policy", "default errno EPERM\nallow read write exit_group execve brk mmap\n");
  CliRun r = summary({"python", learned});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_LE(std::count(r.out.begin(), r.out.end(), '\n'), 20) << r.out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (line.find("learned.policy") == std::string::npos) {
      EXPECT_LE(line.size(), 120u) << line;
    }
  const std::string kernel = line_of(r.out, "kernel interfaces");
  EXPECT_NE(kernel.find("wider (dangerous, still refused: "), std::string::npos) << kernel;
  EXPECT_NE(kernel.find(" more), 0 narrower"), std::string::npos) << kernel;
}

TEST_F(DiffSummaryFiles, NamesTheDangerousCallsAChangeLetsRun) {
  std::string a = write("a.policy", "default errno EPERM\nallow read write\nkill syslog\n");
  std::string b = write("b.policy",
                        "default errno EPERM\nallow read write socket connect\n"
                        "# tracing its own children\nallow ptrace\nerrno EPERM syslog\n");
  CliRun r = summary({a, b});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(line_of(r.out, "network"), "network            2 wider (socket, connect), 0 narrower")
      << r.out;
  EXPECT_NE(line_of(r.out, "processes").find("1 wider (dangerous: ptrace)"), std::string::npos)
      << r.out;
  // kill → errno is wider, but syslog still does not run.
  EXPECT_NE(line_of(r.out, "kernel interfaces").find("dangerous, still refused: syslog"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(line_of(r.out, "files"), "files              no change") << r.out;
  auto j = nlohmann::json::parse(summary({a, b, "--format", "json"}).out);
  EXPECT_EQ(j["categories"]["processes"]["dangerous_run"], nlohmann::json::array({"ptrace"}));
  EXPECT_EQ(j["categories"]["kernel"]["dangerous_run"], nlohmann::json::array());
  EXPECT_EQ(j["categories"]["kernel"]["dangerous_wider"], nlohmann::json::array({"syslog"}));

  CliRun back = summary({b, a});
  EXPECT_EQ(back.code, 0) << back.out;
  CliRun missing = summary({a, dir_ + "/nosuch.policy"});
  EXPECT_EQ(missing.code, 2);
}

// The first wider point found for ptrace is kill → errno at arg0 = 0, but PTRACE_SEIZE runs:
// the summary must say so, whichever point the diff happened to meet first.
TEST_F(DiffSummaryFiles, ADangerousCallThatRunsOnlyForSomeArgumentsIsNamedAsRunning) {
  std::string s2 = write("s2.policy",
                         "default errno EPERM\n# why\nallow ptrace if arg0 == PTRACE_SEIZE\n"
                         "errno EPERM ptrace\n# why\nallow bpf if arg0 == 5\nerrno EPERM bpf\n"
                         "include \"default\"\n");
  CliRun r = summary({"default", s2});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(line_of(r.out, "processes").find("1 wider (dangerous: ptrace)"), std::string::npos)
      << r.out;
  EXPECT_NE(line_of(r.out, "kernel interfaces").find("1 wider (dangerous: bpf)"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("still refused"), std::string::npos) << r.out;
  auto j = nlohmann::json::parse(summary({"default", s2, "--format", "json"}).out);
  EXPECT_EQ(j["categories"]["processes"]["dangerous_run"], nlohmann::json::array({"ptrace"}));
  EXPECT_EQ(j["categories"]["kernel"]["dangerous_run"], nlohmann::json::array({"bpf"}));
}

}  // namespace
}  // namespace jail::policy
