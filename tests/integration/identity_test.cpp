// Who the tool is: uid/gid (1000 in its own user namespace for a root caller, the caller's own
// otherwise), no capabilities in any of the five sets, no_new_privs, its own session, not PID 1.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>
#include <sstream>

#include "run_jail.hpp"

namespace jail_test {
namespace {

class Identity : public CallerTest {};

// "Key:\tvalue" lines of /proc/<pid>/status.
std::map<std::string, std::string> status_fields(const std::string& text) {
  std::map<std::string, std::string> fields;
  for (const std::string& line : split_lines(text)) {
    std::size_t colon = line.find(':');
    if (colon != std::string::npos) fields[line.substr(0, colon)] = trim(line.substr(colon + 1));
  }
  return fields;
}

TEST_P(Identity, UidAndGid) {
  RunResult r = run({"--", "sh", "-c", "id -u; id -g"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<std::string> lines = split_lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << describe(r);
  EXPECT_EQ(lines[0], std::to_string(inside_uid())) << describe(r);
  EXPECT_EQ(lines[1], std::to_string(inside_gid())) << describe(r);
}

TEST_P(Identity, RootCallersToolIsNamedJail) {
  if (!as_root()) GTEST_SKIP() << "the name applies to a root caller's identity";
  RunResult r = run({"--", "id", "-un"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "jail\n") << describe(r);
}

TEST_P(Identity, UserNameResolves) {
  // The small /etc has passwd/group entries for the identity: `id -un` does not fail.
  RunResult r = run({"--", "sh", "-c", "id -un && id -gn"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(split_lines(r.out).size(), 2u) << describe(r);
}

TEST_P(Identity, MappedToTheUnprivilegedHostUid) {
  // uid_map inside: "<inside> <outside> 1" — outside is 65534 for both callers here.
  RunResult r = run({"--", "sh", "-c", "cat /proc/self/uid_map; cat /proc/self/gid_map"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<std::string> lines = split_lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << describe(r);
  std::istringstream uid_map(lines[0]);
  std::istringstream gid_map(lines[1]);
  long inside = -1, outside = -1, count = -1;
  uid_map >> inside >> outside >> count;
  EXPECT_EQ(inside, static_cast<long>(inside_uid())) << describe(r);
  EXPECT_EQ(outside, static_cast<long>(kNobodyUid)) << describe(r);
  EXPECT_EQ(count, 1) << describe(r);
  gid_map >> inside >> outside >> count;
  EXPECT_EQ(inside, static_cast<long>(inside_gid())) << describe(r);
  EXPECT_EQ(outside, static_cast<long>(kNobodyGid)) << describe(r);
  EXPECT_EQ(count, 1) << describe(r);
}

TEST_P(Identity, FilesCreatedThroughABindBelongToTheUnprivilegedHostUid) {
  TempDir out;
  RunResult r = run({"--bind", out.path() + ":/out", "--", "sh", "-c", "echo x > /out/file"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  struct stat st {};
  ASSERT_EQ(stat((out / "file").c_str(), &st), 0) << describe(r);
  EXPECT_EQ(st.st_uid, kNobodyUid);
  EXPECT_EQ(st.st_gid, kNobodyGid);
}

TEST_P(Identity, UidAndGidFlags) {
  RunResult r = run({"--uid", "2000", "--gid", "3000", "--", "sh", "-c", "id -u; id -g"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "2000\n3000\n") << describe(r);
}

TEST_P(Identity, NoCapabilitiesAndNoNewPrivs) {
  RunResult r = run({"--", "cat", "/proc/self/status"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  auto fields = status_fields(r.out);
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
    ASSERT_TRUE(fields.count(set)) << set << "\n" << r.out;
    EXPECT_EQ(fields[set], "0000000000000000") << set << "\n" << r.out;
  }
  EXPECT_EQ(fields["NoNewPrivs"], "1") << r.out;
}

TEST_P(Identity, NoCapabilitiesWithUidZeroInside) {
  // Even asked to be uid 0 inside, the tool has nothing in any capability set.
  RunResult r = run({"--uid", "0", "--gid", "0", "--", "cat", "/proc/self/status"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  auto fields = status_fields(r.out);
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
    EXPECT_EQ(fields[set], "0000000000000000") << set << "\n" << r.out;
  }
  EXPECT_EQ(fields["NoNewPrivs"], "1") << r.out;
}

TEST_P(Identity, NotPidOneAndAReaperIs) {
  RunResult r = run({"--", "sh", "-c", "echo $$; test -d /proc/1 && echo has-pid-1"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<std::string> lines = split_lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << describe(r);
  EXPECT_NE(lines[0], "1") << "the tool must not be PID 1\n" << describe(r);
  EXPECT_EQ(lines[1], "has-pid-1") << describe(r);
}

TEST_P(Identity, OwnSessionWithoutTerminal) {
  // /proc/self/stat after the command name: state ppid pgrp session tty_nr ...
  // The caller's session is outside the pid namespace and would read as 0.
  RunResult r = run({"--", "cat", "/proc/self/stat"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::size_t paren = r.out.rfind(')');
  ASSERT_NE(paren, std::string::npos) << describe(r);
  std::istringstream rest(r.out.substr(paren + 1));
  std::string state;
  long ppid = -1, pgrp = -1, session = -1, tty = -1;
  rest >> state >> ppid >> pgrp >> session >> tty;
  EXPECT_GT(session, 0) << "the tool is still in the caller's session\n" << r.out;
  EXPECT_EQ(tty, 0) << r.out;
}

JAIL_INSTANTIATE_FOR_CALLERS(Identity);

}  // namespace
}  // namespace jail_test
