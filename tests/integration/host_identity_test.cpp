// Who the tool is on the host. No host uid or gid 0 is mapped into its user namespace, ever; a
// root caller's tool gets host ids of its own per jail (2^31 + a slot, freed when the jail ends,
// even by SIGKILL), and the caller's binds are idmapped so that what the tool writes there is the
// caller's, and a private (0700) current directory works.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "run_jail.hpp"

namespace jail_test {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t kFirstHostId = 0x80000000u;

struct IdRange {
  std::uint64_t inside = 0, outside = 0, count = 0;
};

// The lines of a uid_map or gid_map as /proc shows them.
std::vector<IdRange> ranges_in(const std::string& text) {
  std::vector<IdRange> ranges;
  std::istringstream in(text);
  IdRange range;
  while (in >> range.inside >> range.outside >> range.count) ranges.push_back(range);
  return ranges;
}

bool maps_host_root(const std::vector<IdRange>& ranges) {
  for (const IdRange& range : ranges) {
    if (range.outside == 0 || (range.outside < 1 && range.count > 0)) return true;
  }
  return false;
}

class HostIdentity : public CallerTest {};

TEST_P(HostIdentity, NoHostRootInTheToolsNamespace) {
  const RunResult uids = run({"--", "cat", "/proc/self/uid_map"});
  const RunResult gids = run({"--", "cat", "/proc/self/gid_map"});
  ASSERT_EQ(uids.exit_code, 0) << describe(uids);
  ASSERT_EQ(gids.exit_code, 0) << describe(gids);
  for (const auto& [name, text] :
       {std::pair{"uid_map", uids.out}, std::pair{"gid_map", gids.out}}) {
    const std::vector<IdRange> ranges = ranges_in(text);
    ASSERT_EQ(ranges.size(), 1u) << name << ":\n" << text;
    EXPECT_FALSE(maps_host_root(ranges)) << name << ":\n" << text;
    EXPECT_EQ(ranges[0].count, 1u) << name << ":\n" << text;
    EXPECT_EQ(ranges[0].inside, as_root() ? kJailUid : kNobodyUid) << name << ":\n" << text;
    if (as_root()) {
      EXPECT_GE(ranges[0].outside, kFirstHostId) << name << ":\n" << text;
    } else {
      EXPECT_EQ(ranges[0].outside, kNobodyUid) << name << ":\n" << text;  // the caller itself
    }
  }
  // --uid 0 inside is still no one on the host.
  const RunResult root_inside =
      run({"--uid", "0", "--gid", "0", "--", "cat", "/proc/self/uid_map"});
  ASSERT_EQ(root_inside.exit_code, 0) << describe(root_inside);
  EXPECT_FALSE(maps_host_root(ranges_in(root_inside.out))) << root_inside.out;
}

// What the tool writes in a --bind lands as the caller's; a 0700 current directory of the
// caller's is the tool's to read.
TEST_P(HostIdentity, BindsAreWrittenAsTheCallerAndAPrivateCwdWorks) {
  TempDir work;
  const uid_t caller = as_root() ? 0 : kNobodyUid;
  ASSERT_EQ(::chown(work.path().c_str(), caller, caller), 0);
  ASSERT_EQ(::chmod(work.path().c_str(), 0700), 0);
  write_file(work / "notes", "the caller's\n", 0600);
  ASSERT_EQ(::chown((work / "notes").c_str(), caller, caller), 0);

  const RunResult wrote = run({"--bind", work.path() + ":/w", "--", "sh", "-c",
                               "cat /w/notes && echo new > /w/made && mkdir /w/dir"});
  ASSERT_EQ(wrote.exit_code, 0) << describe(wrote);
  EXPECT_EQ(wrote.out, "the caller's\n");
  for (const char* name : {"made", "dir"}) {
    struct stat info {};
    ASSERT_EQ(::stat((work / name).c_str(), &info), 0) << name;
    EXPECT_EQ(info.st_uid, caller) << name;
    EXPECT_EQ(info.st_gid, caller) << name;
  }

  RunOptions inside;
  inside.cwd = work.path();
  const RunResult cwd = run({"--", "sh", "-c", "pwd; cat notes; ls"}, inside);
  ASSERT_EQ(cwd.exit_code, 0) << describe(cwd);
  EXPECT_EQ(cwd.out, work.path() + "\nthe caller's\ndir\nmade\nnotes\n") << describe(cwd);
}

// Without a filter nothing keeps a set-id bit off an idmapped bind, so --policy none leaves a
// root caller's binds unmapped: the tool is not the owner of root's files there.
TEST_P(HostIdentity, WithoutAFilterBindsAreNotIdmapped) {
  if (!as_root()) GTEST_SKIP() << "only a root caller's binds are idmapped";
  TempDir work;
  ASSERT_EQ(::chown(work.path().c_str(), 0, 0), 0);
  const RunResult r = run({"--policy", "none", "--bind", work.path() + ":/w", "--", "sh", "-c",
                           "touch /w/x; chmod u+s /w 2>&1; stat -c %u /w"});
  EXPECT_NE(r.err.find("are not idmapped"), std::string::npos) << describe(r);
  struct stat info {};
  EXPECT_NE(::stat((work / "x").c_str(), &info), 0) << "the tool wrote in root's directory";
  ASSERT_EQ(::stat(work.path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & S_ISUID, 0u);
  EXPECT_NE(r.out.find("65534"), std::string::npos) << describe(r);  // root is nobody inside
}

JAIL_INSTANTIATE_FOR_CALLERS(HostIdentity);

std::uint64_t outside_id(const std::string& uid_map) {
  const auto ranges = ranges_in(uid_map);
  return ranges.empty() ? 0 : ranges[0].outside;
}

// Two root-caller jails at once run as two host uids; a SIGKILLed jail's ids are free again.
TEST(IdentitySlots, ConcurrentJailsHaveTheirOwnHostIdsFreedEvenAfterSigkill) {
  if (::geteuid() != 0) GTEST_FAIL() << "a root caller's host ids need root: run as root (CI does)";
  RunOptions options;
  JailProcess first({"--", "sh", "-c", "cat /proc/self/uid_map; echo READY; sleep 30"}, options);
  ASSERT_TRUE(first.wait_for_stdout("READY", 10s));
  const RunResult second = run_jail({"--", "cat", "/proc/self/uid_map"}, options);
  ASSERT_EQ(second.exit_code, 0) << describe(second);

  ASSERT_EQ(::kill(first.pid(), SIGKILL), 0);
  const RunResult killed = first.wait(10s);
  EXPECT_TRUE(remove_cgroups_left_by(first.pid()).empty());
  const std::uint64_t first_id = outside_id(killed.out);
  const std::uint64_t second_id = outside_id(second.out);
  ASSERT_GE(first_id, kFirstHostId) << killed.out;
  ASSERT_GE(second_id, kFirstHostId) << second.out;
  EXPECT_NE(first_id, second_id) << killed.out << second.out;

  // The slot is a lock on one byte of /run/jail/id-slots, dropped by the kernel with the killed
  // jail's last descriptor. Other tests' jails may take it meanwhile, for a moment each: the
  // lock must come free within seconds, never stay held.
  const int slots = ::open("/run/jail/id-slots", O_RDWR | O_CLOEXEC);
  ASSERT_GE(slots, 0);
  bool taken = false;
  for (int attempt = 0; attempt < 200 && !taken; ++attempt) {
    struct flock range {};
    range.l_type = F_WRLCK;
    range.l_whence = SEEK_SET;
    range.l_start = static_cast<off_t>(first_id - kFirstHostId);
    range.l_len = 1;
    taken = ::fcntl(slots, F_OFD_SETLK, &range) == 0;
    if (!taken) std::this_thread::sleep_for(50ms);
  }
  ::close(slots);
  EXPECT_TRUE(taken) << "slot of host id " << first_id << " still held after its jail was killed";
}

}  // namespace
}  // namespace jail_test
