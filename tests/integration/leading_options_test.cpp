// jail's logging options may come before a subcommand, as git's and systemctl's do: `jail -q
// commit ID` is the commit, not a run missing its "--".
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "run_jail.hpp"

namespace jail_test {
namespace {

TEST(LeadingOptions, QuietBeforeASubcommandIsTheSubcommand) {
  TempDir sessions;
  RunResult r = run_jail({"-q", "commit", "no-such-session", "--session-dir", sessions.path()});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_EQ(r.err.find("missing '--'"), std::string::npos) << describe(r);
  EXPECT_NE(r.err.find("no session no-such-session"), std::string::npos) << describe(r);
}

TEST(LeadingOptions, TheLogFormatAndFileApplyToTheSubcommand) {
  TempDir sessions;
  RunResult json_run = run_jail(
      {"--log-format", "json", "commit", "no-such-session", "--session-dir", sessions.path()});
  EXPECT_EQ(json_run.exit_code, 1) << describe(json_run);
  const auto line = nlohmann::json::parse(json_run.err, nullptr, false);
  ASSERT_FALSE(line.is_discarded()) << "not one JSON line: " << describe(json_run);
  EXPECT_EQ(line["level"], "error") << line.dump();
  EXPECT_NE(line["message"].get<std::string>().find("no session"), std::string::npos)
      << line.dump();

  const std::string log = sessions / "jail.log";
  RunResult to_file = run_jail(
      {"--log-file=" + log, "-v", "commit", "no-such-session", "--session-dir", sessions.path()});
  EXPECT_EQ(to_file.exit_code, 1) << describe(to_file);
  EXPECT_EQ(to_file.err, "") << describe(to_file);
  EXPECT_NE(read_file(log).value_or("").find("no session no-such-session"), std::string::npos);
}

TEST(LeadingOptions, RunAndExportOciTakeThemAsTheirOwn) {
  RunResult r = run_jail({"-q", "run", "--no-cwd", "--", "sh", "-c", "echo ran"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "ran\n") << describe(r);
  // Not a subcommand after them: a run, whose parser reads them as ever.
  RunResult plain = run_jail({"-q", "--no-cwd", "--", "sh", "-c", "echo plain"});
  EXPECT_EQ(plain.exit_code, 0) << describe(plain);
  EXPECT_EQ(plain.out, "plain\n") << describe(plain);
}

}  // namespace
}  // namespace jail_test
