// Who the tool is: uid/gid (1000 in its own user namespace for a root caller, the caller's own
// otherwise), no capabilities in any of the five sets, no_new_privs, its own session, not PID 1.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <map>
#include <optional>
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

// The "inside outside count" line of a uid_map/gid_map that covers `inside`, if any.
std::optional<std::array<long, 3>> map_line_for(const std::string& map, long inside) {
  for (const std::string& line : split_lines(map)) {
    std::istringstream fields(line);
    std::array<long, 3> f{-1, -1, -1};
    fields >> f[0] >> f[1] >> f[2];
    if (fields && inside >= f[0] && inside < f[0] + f[2]) return f;
  }
  return std::nullopt;
}

TEST_P(Identity, MappedToTheCallerOrTheJailsOwnHostUid) {
  // The unprivileged caller's tool is the caller (65534 here); a root caller's is a host id of
  // its jail's own, 2^31 + a slot (host_identity_test.cpp).
  RunResult r = run({"--", "sh", "-c", "cat /proc/self/uid_map; echo ---; cat /proc/self/gid_map"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::size_t split = r.out.find("---\n");
  ASSERT_NE(split, std::string::npos) << describe(r);
  auto uid = map_line_for(r.out.substr(0, split), inside_uid());
  auto gid = map_line_for(r.out.substr(split + 4), inside_gid());
  ASSERT_TRUE(uid) << "uid " << inside_uid() << " is not mapped\n" << describe(r);
  ASSERT_TRUE(gid) << "gid " << inside_gid() << " is not mapped\n" << describe(r);
  const long host_uid = (*uid)[1] + (inside_uid() - (*uid)[0]);
  const long host_gid = (*gid)[1] + (inside_gid() - (*gid)[0]);
  if (as_root()) {
    EXPECT_GE(host_uid, 0x80000000L) << describe(r);
    EXPECT_EQ(host_gid, host_uid) << describe(r);
  } else {
    EXPECT_EQ(host_uid, static_cast<long>(kNobodyUid)) << describe(r);
    EXPECT_EQ(host_gid, static_cast<long>(kNobodyGid)) << describe(r);
  }
}

// The bound directory is nobody's here: through a root caller's idmapped bind what the tool
// makes is the directory owner's, and an unprivileged caller is nobody itself.
TEST_P(Identity, FilesCreatedThroughABindBelongToTheBoundDirectorysOwner) {
  TempDir out;
  RunResult r = run({"--bind", out.path() + ":/out", "--", "sh", "-c", "echo x > /out/file"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  struct stat st {};
  ASSERT_EQ(stat((out / "file").c_str(), &st), 0) << describe(r);
  EXPECT_EQ(st.st_uid, kNobodyUid);
  EXPECT_EQ(st.st_gid, kNobodyGid);
}

TEST_P(Identity, NoSupplementaryGroups) {
  // Root's groups (or any of the caller's) do not follow the tool in.
  RunResult r = run({"--", "sh", "-c", "id -G; grep '^Groups:' /proc/self/status"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<std::string> lines = split_lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << describe(r);
  EXPECT_EQ(lines[0], std::to_string(inside_gid())) << describe(r);
  std::string groups = trim(lines[1].substr(lines[1].find(':') + 1));
  EXPECT_TRUE(groups.empty() || groups == std::to_string(inside_gid())) << describe(r);
}

TEST_P(Identity, UidZeroInsideIsStillUnprivilegedOutside) {
  TempDir out;
  RunResult r = run({"--uid", "0", "--gid", "0", "--bind", out.path() + ":/out", "--", "sh", "-c",
                     "id -u; echo x > /out/file"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "0\n") << describe(r);
  struct stat st {};
  ASSERT_EQ(stat((out / "file").c_str(), &st), 0) << describe(r);
  EXPECT_EQ(st.st_uid, kNobodyUid) << "uid 0 inside must not be host root";
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

TEST_P(Identity, NotPidOneButChildOfThePidOneReaper) {
  RunResult r = run({"--", "sh", "-c", "echo $$; echo $PPID"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<std::string> lines = split_lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << describe(r);
  EXPECT_NE(lines[0], "1") << "the tool must not be PID 1\n" << describe(r);
  EXPECT_LT(std::stol(lines[0]), 10) << "not in a fresh pid namespace\n" << describe(r);
  EXPECT_EQ(lines[1], "1") << "the tool's parent must be the reaper, PID 1\n" << describe(r);
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
  EXPECT_NE(session, static_cast<long>(getsid(0))) << "the caller's session\n" << r.out;
  EXPECT_LT(session, 10) << "a session outside the jail's pid namespace\n" << r.out;
  EXPECT_EQ(tty, 0) << r.out;
}

JAIL_INSTANTIATE_FOR_CALLERS(Identity);

}  // namespace
}  // namespace jail_test
