// A tool cannot leave a set-user-ID or set-group-ID file, a file capability, a security.* or
// trusted.* attribute, or a device node on a writable bind — the host would trust each of them,
// and once a root caller's binds are idmapped the tool's files there are root's. The probe
// (probes/setid_routes.c) attacks every route through its raw system call and prints one line a
// route; then the host's side of the bind is inspected. The baseline refuses the chmod family and
// set-id creation modes (EPERM), openat2 (ENOSYS), the setxattr family (EOPNOTSUPP), device nodes
// and whiteouts (EPERM); the kernel refuses links and renames across mounts (EXDEV), real device
// nodes, file capabilities and trusted.* for a tool without capabilities.
//
// Every baseline assertion is one that fails without its rule: WithoutAFilter runs the same
// probe under `--policy none` and shows each of those routes working, leaving the very file the
// filtered runs must not leave. The files it leaves belong to the test directory's owner
// (nobody), hold at most two bytes of text (no program to run) and live only in that directory.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "run_jail.hpp"

namespace jail_test {
namespace {

using nlohmann::json;

// The attributes the probe tries to set.
constexpr const char* kAttributes[] = {"security.capability", "trusted.x", "user.x"};

// "route=NAME result=R" lines of the probe's output: NAME → R.
std::map<std::string, std::string> routes_of(const std::string& out) {
  std::map<std::string, std::string> routes;
  for (const std::string& line : split_lines(out)) {
    if (!line.starts_with("route=")) continue;
    const auto space = line.find(" result=");
    if (space == std::string::npos) continue;
    routes[line.substr(6, space - 6)] = line.substr(space + 8);
  }
  return routes;
}

std::string route_list(const std::map<std::string, std::string>& routes) {
  std::string out;
  for (const auto& [name, result] : routes) out += " " + name + "=" + result;
  return out;
}

// A set-user-ID file of the host's /usr/bin (seen at the same path in the jail), su first.
std::optional<std::string> host_setid_binary() {
  std::vector<std::string> candidates = {"/usr/bin/su"};
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/bin", ec))
    candidates.push_back(entry.path().string());
  for (const std::string& path : candidates) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && (info.st_mode & S_ISUID) != 0)
      return path;
  }
  return std::nullopt;
}

bool has_attribute(const std::string& path, const char* name) {
  return ::lgetxattr(path.c_str(), name, nullptr, 0) >= 0;
}

// What the host sees in `dir`: one line per entry that is set-id, a device node or carries one
// of the probe's attributes. Empty when the bind is clean.
std::vector<std::string> host_findings(const std::string& dir) {
  std::vector<std::string> findings;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string path = entry.path().string();
    const std::string name = entry.path().filename().string();
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) continue;
    char mode[16];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
    if ((info.st_mode & (S_ISUID | S_ISGID)) != 0) findings.push_back(name + ": mode " + mode);
    if (S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode)) {
      findings.push_back(name + ": " + (S_ISCHR(info.st_mode) ? "character" : "block") +
                         " device " + std::to_string(major(info.st_rdev)) + ":" +
                         std::to_string(minor(info.st_rdev)));
    }
    for (const char* attribute : kAttributes) {
      if (has_attribute(path, attribute)) findings.push_back(name + ": xattr " + attribute);
    }
  }
  return findings;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += "  " + line + "\n";
  return out;
}

std::optional<mode_t> host_mode(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return std::nullopt;
  return info.st_mode;
}

class SetIdRoutes : public CallerTest {
 protected:
  struct Attack {
    RunResult run;
    std::map<std::string, std::string> routes;
    json status;
  };

  // The probe against `dir` bound at /w, under `policy`; the set-id binary when the host has one.
  Attack attack(const TempDir& dir, const std::string& policy) {
    const std::string status = dir_ / "status.json";
    std::remove(status.c_str());
    std::vector<std::string> command = {probe("setid_routes"), "/w"};
    if (setid_) command.push_back(*setid_);
    Attack a;
    a.run = run(
        concat({probe_mount(),
                {"--status-file", status, "--bind", dir.path() + ":/w", "--policy", policy, "--"},
                command}));
    a.routes = routes_of(a.run.out);
    a.status = json::parse(read_file(status).value_or("{}"), nullptr, false);
    std::printf("[ measured ] %s, --policy %s:%s\n", as_root() ? "root" : "unprivileged",
                policy == "none" || policy == "default" ? policy.c_str() : "<allow-all file>",
                route_list(a.routes).c_str());
    return a;
  }

  // Every route and what the baseline (or the kernel, where noted) answers it.
  void expect_refused(const Attack& a, const TempDir& dir) {
    ASSERT_EQ(a.run.exit_code, 0) << describe(a.run);
    ASSERT_NE(a.run.out.find("\ndone\n"), std::string::npos) << describe(a.run);
    const auto& r = a.routes;
    auto result = [&](const std::string& route) {
      auto it = r.find(route);
      return it == r.end() ? std::string("(not tried)") : it->second;
    };
    const std::string all = describe(a.run);

    // The same calls without the bits work: a refusal below is the bits', not the file's.
    for (const char* plain : {"chmod_0755", "fchmod_0755", "fchmodat_0755", "fchmodat2_0755",
                              "rename_over_0755", "mknod_fifo"})
      EXPECT_EQ(result(plain), "ok") << plain << "\n" << all;
    // The chmod family and a set-id creation mode: the baseline's EPERM.
    for (const char* route :
         {"chmod", "chmod_setgid", "fchmod", "fchmodat", "fchmodat2", "open", "openat", "creat",
          "open_tmpfile", "mknod_setuid", "mknodat_setuid", "rename_over_chmod"})
      EXPECT_EQ(result(route), "EPERM") << route << "\n" << all;
    // openat2's mode is in memory: the whole call gets ENOSYS, and libc would fall back to openat.
    EXPECT_EQ(result("openat2"), "ENOSYS") << all;
    // The setxattr family, whatever the name (user.* too): EOPNOTSUPP, "no xattrs here". Without
    // the filter the kernel says EPERM to the first four and lets user.x through.
    for (const char* route :
         {"setxattr_capability", "lsetxattr_capability", "fsetxattr_capability",
          "setxattrat_capability", "setxattr_trusted", "setxattr_user", "setxattrat_user"})
      EXPECT_EQ(result(route), "EOPNOTSUPP") << route << "\n" << all;
    // Device nodes: the baseline's EPERM. The kernel refuses a real one (1:3, 7:0) itself without
    // CAP_MKNOD in the initial user namespace; a whiteout (0:0) it lets any user make.
    for (const char* route :
         {"mknod_chr", "mknodat_blk", "mknod_whiteout", "mknodat_whiteout", "renameat2_whiteout"})
      EXPECT_EQ(result(route), "EPERM") << route << "\n" << all;
    // A file of the bind renamed over another: allowed, and it has no bits to bring.
    EXPECT_EQ(result("rename_over"), "ok") << all;
    if (setid_) {
      // The kernel's refusal, not the filter's: a link or rename never crosses mounts, and the
      // host's set-id binaries are on another mount than /w. Asserted so that a later change
      // (the bind and /usr sharing a mount) cannot let them in unseen.
      for (const char* route :
           {"link_setid", "linkat_empty_path_setid", "rename_setid", "rename_over_setid"})
        EXPECT_EQ(result(route), "EXDEV") << route << "\n" << all;
    }

    // The quiet refusals are answered in the kernel and never reported; the others are.
    for (const char* quiet :
         {"denied openat2", "denied setxattr", "denied lsetxattr", "denied fsetxattr"})
      EXPECT_EQ(a.run.err.find(quiet), std::string::npos) << quiet << "\n" << all;
    for (const char* loud : {"denied chmod(", "denied fchmodat2(", "denied openat(",
                             "denied mknod(", "denied mknodat(", "denied renameat2("})
      EXPECT_NE(a.run.err.find(loud), std::string::npos) << loud << "\n" << all;
    // chmod 3 (chmod, chmod_setgid, rename_over_chmod), fchmod, fchmodat, fchmodat2, open,
    // openat 2 (openat, open_tmpfile), creat, mknod 3 and mknodat 3 (device, whiteout, set-id),
    // renameat2: 17; nothing for openat2 or the xattrs.
    EXPECT_EQ(a.status["denials"].value("count", -1), 17) << a.status.dump();

    // The host's side of the bind.
    EXPECT_EQ(joined(host_findings(dir.path())), "") << "left on the host\n" << all;
    for (const char* name : {"chmod", "fchmod", "fchmodat", "fchmodat2"}) {
      const auto mode = host_mode(dir / name);
      ASSERT_TRUE(mode) << name;
      EXPECT_EQ(*mode & 07777, 0755u) << name;
    }
    for (const char* name :
         {"open", "openat", "creat", "openat2", "tmpfile", "mknod", "mknodat", "null", "blk",
          "whiteout", "whiteout_at", "wdst", "b", "link", "flink", "renamed"})
      EXPECT_FALSE(host_mode(dir / name)) << name << " exists on the host";
    const auto renamed_over = host_mode(dir / "a");
    ASSERT_TRUE(renamed_over);
    EXPECT_EQ(*renamed_over & 07777, 0644u) << "/w/a is b, renamed over it";
    const auto whiteout_source = host_mode(dir / "wsrc");
    ASSERT_TRUE(whiteout_source);
    EXPECT_TRUE(S_ISREG(*whiteout_source)) << "renameat2 RENAME_WHITEOUT moved it";
    EXPECT_TRUE(host_mode(dir / "fifo") && S_ISFIFO(*host_mode(dir / "fifo")));
  }

  void SetUp() override {
    setid_ = host_setid_binary();
    if (!setid_) {
      std::printf(
          "[ measured ] no set-user-ID file under /usr/bin on this host: the link and rename "
          "routes of a host set-id binary are not attacked\n");
    }
  }

  // The bind is the caller's own: a root caller's is idmapped from root, so through it the tool
  // owns root's files — what a set-id bit or a file capability would turn into root on the host.
  void owned_by_caller(const TempDir& dir) const {
    const uid_t owner = as_root() ? 0 : kNobodyUid;
    ASSERT_EQ(::chown(dir.path().c_str(), owner, as_root() ? 0 : kNobodyGid), 0);
  }

  std::optional<std::string> setid_;
  TempDir dir_;
};

TEST_P(SetIdRoutes, EveryRouteIsRefusedAndTheHostKeepsNothing) {
  TempDir bind;
  owned_by_caller(bind);
  expect_refused(attack(bind, "default"), bind);
}

// A policy that allows every one of these calls first: the baseline comes before it.
TEST_P(SetIdRoutes, APolicyAllowingEveryRouteCannotLiftTheBaseline) {
  write_file(dir_ / "allow-all.policy",
             "allow chmod fchmod fchmodat fchmodat2 open openat openat2 creat mknod mknodat\n"
             "allow setxattr lsetxattr fsetxattr setxattrat link linkat rename renameat2\n"
             "include \"default\"\n");
  TempDir bind;
  owned_by_caller(bind);
  expect_refused(attack(bind, dir_ / "allow-all.policy"), bind);
}

// The control: without a filter the kernel lets through every route the baseline refuses above
// (so each of those assertions fails without its rule), and refuses the rest itself.
TEST_P(SetIdRoutes, WithoutAFilterTheKernelLetsTheBaselinesRoutesThrough) {
  TempDir bind;
  // --policy none leaves a root caller's binds unmapped (host_identity_test.cpp): the tool
  // writes there as the jail's own host id, as anyone may in a 0777 directory.
  if (as_root()) {
    ASSERT_EQ(::chmod(bind.path().c_str(), 0777), 0);
  }
  const Attack a = attack(bind, "none");
  ASSERT_EQ(a.run.exit_code, 0) << describe(a.run);
  const std::string all = describe(a.run);
  auto result = [&](const std::string& route) {
    auto it = a.routes.find(route);
    return it == a.routes.end() ? std::string("(not tried)") : it->second;
  };
  for (const char* route : {"chmod", "chmod_setgid", "fchmod", "fchmodat", "fchmodat2", "open",
                            "openat", "creat", "open_tmpfile", "open_tmpfile_link", "openat2",
                            "mknod_setuid", "mknodat_setuid", "mknod_whiteout", "mknodat_whiteout",
                            "renameat2_whiteout", "rename_over_chmod", "rename_over"})
    EXPECT_EQ(result(route), "ok") << route << "\n" << all;
  // Each of those left what the baseline keeps off the host.
  const std::string found = joined(host_findings(bind.path()));
  for (const char* left :
       {"chmod: mode 2755", "fchmod: mode 4755", "fchmodat: mode 4755", "fchmodat2: mode 4755",
        "open: mode 4755", "openat: mode 4755", "creat: mode 4755", "tmpfile: mode 4755",
        "openat2: mode 4755", "mknod: mode 4755", "mknodat: mode 4755", "a: mode 4755",
        "whiteout: character device 0:0", "whiteout_at: character device 0:0",
        "wsrc: character device 0:0"})
    EXPECT_NE(found.find(std::string("  ") + left + "\n"), std::string::npos) << left << "\n"
                                                                              << found;
  // The kernel's own refusals, which the filtered runs see as the same errno (device nodes) or
  // the baseline's EOPNOTSUPP (attributes).
  for (const char* route :
       {"mknod_chr", "mknodat_blk", "setxattr_capability", "lsetxattr_capability",
        "fsetxattr_capability", "setxattrat_capability", "setxattr_trusted"})
    EXPECT_EQ(result(route), "EPERM") << route << "\n" << all;
  if (setid_) {
    for (const char* route :
         {"link_setid", "linkat_empty_path_setid", "rename_setid", "rename_over_setid"})
      EXPECT_EQ(result(route), "EXDEV") << route << "\n" << all;
  }
  // user.* needs a filesystem with user xattrs under the test's directory (ext4, xfs, btrfs,
  // tmpfs since 6.6); without them the kernel answers EOPNOTSUPP itself.
  if (result("setxattr_user") == "EOPNOTSUPP") {
    std::printf(
        "[ measured ] %s has no user xattrs: the baseline's EOPNOTSUPP for user.x is "
        "the filesystem's answer too\n",
        bind.path().c_str());
  } else {
    EXPECT_EQ(result("setxattr_user"), "ok") << all;
    EXPECT_EQ(result("setxattrat_user"), "ok") << all;
    EXPECT_TRUE(has_attribute(bind / "xattr", "user.x")) << found;
  }
}

JAIL_INSTANTIATE_FOR_CALLERS(SetIdRoutes);

}  // namespace
}  // namespace jail_test
