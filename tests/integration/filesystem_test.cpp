// The default root: read-only everywhere but /tmp (and /dev/shm); host secrets and state absent;
// the cwd bound read-only at its own path and used as the working directory; a minimal /dev.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "run_jail.hpp"

namespace jail_test {
namespace {

class Filesystem : public CallerTest {
 protected:
  // Runs the try_write probe inside on `paths`; returns its "PATH RESULT" lines.
  std::vector<std::string> try_write(const std::vector<std::string>& paths, RunResult& r) {
    r = run(concat({probe_mount(), {"--", probe("try_write")}, paths}));
    return split_lines(r.out);
  }
};

TEST_P(Filesystem, HostSecretsAndStateAbsent) {
  RunResult r = run({"--", "sh", "-c",
                     "for p in /home /root /etc/shadow /etc/gshadow /var/run; do"
                     " if [ -e \"$p\" ] || [ -L \"$p\" ]; then echo \"present: $p\"; fi; done"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "") << describe(r);
}

TEST_P(Filesystem, NoVarRunOrSys) {
  // With --no-cwd nothing is bound beneath /var (the test cwd lives in /var/tmp).
  RunResult r = run({"--no-cwd", "--", "sh", "-c",
                     "for p in /var /run /sys /home /root /boot /srv /opt /mnt; do"
                     " if [ -e \"$p\" ] || [ -L \"$p\" ]; then echo \"present: $p\"; fi; done"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "") << describe(r);
}

TEST_P(Filesystem, HostTmpNotVisible) {
  char marker[] = "/tmp/jail-test-marker-XXXXXX";
  int fd = mkstemp(marker);
  ASSERT_GE(fd, 0);
  close(fd);
  RunResult r =
      run({"--", "sh", "-c", std::string("test -e ") + marker + " && echo visible; ls -A /tmp"});
  unlink(marker);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "") << "the jail's /tmp must be fresh\n" << describe(r);
}

TEST_P(Filesystem, EtcIsSmallAndHasTheBasics) {
  RunResult r = run({"--", "sh", "-c",
                     "for f in /etc/passwd /etc/group /etc/hosts /etc/nsswitch.conf "
                     "/etc/ld.so.cache; do test -r $f || echo \"missing: $f\"; done"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "") << describe(r);
  // The host's own account list is not copied in: no host account but root and nobody.
  RunResult passwd = run({"--", "cut", "-d:", "-f1", "/etc/passwd"});
  EXPECT_EQ(passwd.exit_code, 0) << describe(passwd);
  std::vector<std::string> inside = split_lines(passwd.out);
  for (const std::string& line : split_lines(read_file("/etc/passwd").value_or(""))) {
    std::string name = line.substr(0, line.find(':'));
    if (name == "root" || name == "nobody" || name == "jail") continue;
    EXPECT_EQ(std::find(inside.begin(), inside.end(), name), inside.end())
        << "host account " << name << " visible\n"
        << describe(passwd);
  }
}

TEST_P(Filesystem, RootIsReadOnly) {
  RunResult r;
  auto lines = try_write({"/newfile", "/etc/newfile", "/usr/newfile", "/usr/bin/newfile"}, r);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  for (const std::string& line : lines) {
    EXPECT_TRUE(line.ends_with(" EROFS")) << line << "\n" << describe(r);
  }
  RunResult dirs;
  auto mk = try_write({"--mkdir", "/newdir", "/etc/newdir"}, dirs);
  ASSERT_EQ(dirs.exit_code, 0) << describe(dirs);
  for (const std::string& line : mk) EXPECT_TRUE(line.ends_with(" EROFS")) << describe(dirs);
}

TEST_P(Filesystem, ShellReportsReadOnlyFileSystem) {
  RunResult r = run({"--", "sh", "-c", "echo x > /newfile"});
  EXPECT_NE(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.err.find("Read-only file system"), std::string::npos) << describe(r);
}

TEST_P(Filesystem, CwdIsBoundReadOnlyAtItsOwnPath) {
  write_file(cwd_ / "input.txt", "from the host\n");
  RunResult r = run({"--", "sh", "-c", "pwd; cat input.txt"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, cwd_.path() + "\nfrom the host\n") << describe(r);

  RunResult w;
  auto lines = try_write({cwd_ / "written", "input.txt"}, w);
  ASSERT_EQ(w.exit_code, 0) << describe(w);
  ASSERT_EQ(lines.size(), 2u) << describe(w);
  EXPECT_EQ(lines[0], cwd_ / "written" + " EROFS") << describe(w);
  EXPECT_EQ(lines[1], "input.txt EROFS") << describe(w);
  EXPECT_FALSE(read_file(cwd_ / "written")) << "a write reached the host cwd";
  EXPECT_EQ(read_file(cwd_ / "input.txt").value_or(""), "from the host\n");
}

TEST_P(Filesystem, CwdWithSpacesAndColons) {
  std::string odd = cwd_ / "a dir: with spaces";
  std::filesystem::create_directory(odd);
  RunResult r = run({"--", "pwd"}, {.cwd = odd});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, odd + "\n") << describe(r);
}

TEST_P(Filesystem, CwdFlag) {
  TempDir other;
  write_file(other / "marker", "other\n");
  RunResult r = run({"--ro-bind", other.path() + ":/work-dir", "--cwd", "/work-dir", "--", "sh",
                     "-c", "pwd; cat marker"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "/work-dir\nother\n") << describe(r);
}

TEST_P(Filesystem, NoCwdStartsInRootAndHidesCwd) {
  RunResult r =
      run({"--no-cwd", "--", "sh", "-c", "pwd; test -e " + cwd_.path() + " && echo visible"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_EQ(r.out, "/\n") << describe(r);
}

TEST_P(Filesystem, TmpIsWritableTmpfs) {
  RunResult r = run({"--", "sh", "-c",
                     "echo hello > /tmp/f && cat /tmp/f && mkdir /tmp/d && stat -f -c %T /tmp"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "hello\ntmpfs\n") << describe(r);
}

TEST_P(Filesystem, TmpfsSizeLimitsTmp) {
  RunResult r = run(
      {"--tmpfs-size", "1m", "--", "sh", "-c", "head -c 4000000 /dev/zero > /tmp/big; echo rc=$?"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "rc=1\n") << describe(r);
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << describe(r);
}

TEST_P(Filesystem, MinimalDev) {
  RunResult r = run({"--", "ls", "-A", "/dev"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<std::string> entries = split_lines(r.out);
  std::set<std::string> seen(entries.begin(), entries.end());
  for (const char* need : {"null", "zero", "full", "random", "urandom", "tty", "fd", "stdin",
                           "stdout", "stderr", "shm"}) {
    EXPECT_TRUE(seen.count(need)) << "/dev/" << need << " missing\n" << describe(r);
  }
  const std::set<std::string> allowed = {"null", "zero", "full",  "random",  "urandom",
                                         "tty",  "fd",   "stdin", "stdout",  "stderr",
                                         "shm",  "pts",  "ptmx",  "console", "core"};
  for (const std::string& e : entries) {
    EXPECT_TRUE(allowed.count(e)) << "unexpected /dev/" << e << "\n" << describe(r);
  }
}

TEST_P(Filesystem, DevNodesWork) {
  RunResult r = run({"--", "sh", "-c",
                     "echo x > /dev/null && head -c 4 /dev/zero | od -An -tx1 | tr -d ' ' &&"
                     " head -c 16 /dev/urandom | wc -c && echo y > /dev/shm/f && cat /dev/shm/f &&"
                     " stat -f -c %T /dev/shm"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "00000000\n16\ny\ntmpfs\n") << describe(r);
}

TEST_P(Filesystem, ProcIsFreshAndNoExec) {
  RunResult r = run({"--", "cat", "/proc/self/mountinfo"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  bool found = false;
  for (const std::string& line : split_lines(r.out)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, mount_point, options;
    fields >> id >> parent >> dev >> root >> mount_point >> options;
    if (mount_point != "/proc") continue;
    found = true;
    for (const char* flag : {"nosuid", "nodev", "noexec"}) {
      EXPECT_NE(("," + options + ",").find(std::string(",") + flag + ","), std::string::npos)
          << flag << " missing on /proc: " << line;
    }
  }
  EXPECT_TRUE(found) << "no /proc mount\n" << r.out;
}

TEST_P(Filesystem, NoHostMountsLeak) {
  // mountinfo inside names only the jail's own mounts: nothing of the host's /var, /home, /root.
  RunResult r = run({"--no-cwd", "--", "cat", "/proc/self/mountinfo"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  for (const std::string& line : split_lines(r.out)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, mount_point;
    fields >> id >> parent >> dev >> root >> mount_point;
    for (const char* banned : {"/var", "/home", "/root", "/sys", "/run", "/boot"}) {
      EXPECT_FALSE(mount_point == banned || mount_point.starts_with(std::string(banned) + "/"))
          << line;
    }
  }
}

JAIL_INSTANTIATE_FOR_CALLERS(Filesystem);

}  // namespace
}  // namespace jail_test
