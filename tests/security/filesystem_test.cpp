// Filesystem escapes: the runc CVEs (/proc/self/exe overwrite, leaked fds as cwd), /proc/1/root,
// /proc/sys and /sys, device nodes, remounting, mount propagation, symlinked and raced bind
// targets, hard links, setuid binaries. Each test asserts the attack fails and how.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "support.hpp"

namespace jail_security {
namespace {

class Filesystem : public SecurityTest {};

struct FileStamp {
  off_t size = -1;
  timespec mtime{};
  bool operator==(const FileStamp& o) const {
    return size == o.size && mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec;
  }
};

FileStamp stamp(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return {};
  return {st.st_size, st.st_mtim};
}

TEST_P(Filesystem, ProcSelfExeCannotBeOverwritten) {
  // runc CVE-2019-5736: the tool opened /proc/self/exe (the runtime, at exec time) for writing.
  const FileStamp jail_before = stamp(JAIL_BINARY);
  const FileStamp probe_before = stamp(std::string(JAIL_PROBE_DIR) + "/sec_fs");
  Outcome o = jail({}, {sec_probe("sec_fs"), "exe"});
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  const bool contained =
      one_of(o.value("open_self_exe_w"), {"ETXTBSY", "EROFS", "EACCES"}) &&
      one_of(o.value("reopen_self_exe_w"), {"ETXTBSY", "EROFS", "EACCES"}) &&
      one_of(o.value("open_init_exe_w"), {"ETXTBSY", "EROFS", "EACCES", "EPERM", "ENOENT"}) &&
      stamp(JAIL_BINARY) == jail_before &&
      stamp(std::string(JAIL_PROBE_DIR) + "/sec_fs") == probe_before;
  row("proc_self_exe_overwrite", "ETXTBSY/EROFS/EACCES; binaries unchanged",
      o.value("open_self_exe_w") + "," + o.value("reopen_self_exe_w") + "," +
          o.value("open_init_exe_w"),
      contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(Filesystem, LeakedHostDirectoryFdIsClosed) {
  // runc CVE-2024-21626: a host directory fd leaked into the container, then used as cwd.
  const int dir = open(scratch_.path().c_str(), O_RDONLY | O_DIRECTORY);  // no O_CLOEXEC
  ASSERT_GE(dir, 0);
  RunOptions options;
  options.extra_fd = ExtraFd{dir, 7};
  Outcome o = jail({}, {sec_probe("sec_fs"), "fds", "7"}, options);
  close(dir);
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  const bool contained = o.value("extra_fds") == "none" && o.value("fstat_wanted") == "EBADF" &&
                         o.value("fchdir_wanted") == "EBADF" &&
                         o.value("chdir_proc_fd") == "ENOENT" &&
                         one_of(o.value("open_dotdot_shadow"), {"ENOENT", "EACCES"});
  row("leaked_fd_as_cwd", "fd 7 closed (EBADF), /proc/self/fd/7 ENOENT",
      "fds=" + o.value("extra_fds") + " fchdir=" + o.value("fchdir_wanted") +
          " chdir=" + o.value("chdir_proc_fd"),
      contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(Filesystem, CwdThroughALeakedFdIsRefused) {
  // The same CVE through the runtime's own cwd: --cwd /proc/self/fd/7 with fd 7 a host dir.
  write_file(scratch_ / "host-marker", "host\n");
  const int dir = open(scratch_.path().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir, 0);
  RunOptions options;
  options.extra_fd = ExtraFd{dir, 7};
  Outcome o =
      jail({"--cwd", "/proc/self/fd/7"},
           {sec_probe("sec_info"), "paths", "host-marker", "../../../../etc/shadow"}, options);
  close(dir);
  const bool refused = (o.run.exit_code == 125 && o.outcome() == "setup_error") || runsc_refused(o);
  const bool blind = o.run.exit_code == 0 && one_of(o.value("open:host-marker"), {"ENOENT"}) &&
                     one_of(o.value("open:../../../../etc/shadow"), {"ENOENT", "EACCES"});
  row("cwd_proc_self_fd", "setup_error, or the host dir unreachable",
      refused
          ? "setup_error"
          : ("exit " + std::to_string(o.run.exit_code) + " marker=" + o.value("open:host-marker")),
      refused || blind);
  EXPECT_TRUE(refused || blind) << o.describe();
}

TEST_P(Filesystem, Proc1RootIsTheJailsOwnRoot) {
  // The marker exists on the host only; /proc/1/root must not lead there.
  write_file(scratch_ / "proc1-marker", "host\n");
  Outcome o = jail({}, {sec_probe("sec_fs"), "proc1", scratch_ / "proc1-marker"});
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  const bool root_ok = o.value("proc1_root_is_own_root") == "yes" ||
                       one_of(o.value("stat_proc1_root"), {"EACCES", "EPERM"});
  const bool contained = one_of(o.value("open_proc1_root_marker"), {"ENOENT", "EACCES"}) &&
                         root_ok && one_of(o.value("open_proc1_mem_rw"), {"EACCES", "EPERM"});
  row("proc1_root", "marker ENOENT/EACCES; /proc/1/root is /; /proc/1/mem EACCES",
      "marker=" + o.value("open_proc1_root_marker") + " same_root=" +
          o.value("proc1_root_is_own_root") + " mem=" + o.value("open_proc1_mem_rw"),
      contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(Filesystem, ProcSysAndSysAreReadOnly) {
  const auto core_pattern = read_file("/proc/sys/kernel/core_pattern");
  const auto hostname = read_file("/proc/sys/kernel/hostname");
  Outcome o = jail({}, {sec_probe("sec_fs"), "procsys"});
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  bool contained = read_file("/proc/sys/kernel/core_pattern") == core_pattern &&
                   read_file("/proc/sys/kernel/hostname") == hostname;
  std::string observed;
  for (const char* t : {"/proc/sys/kernel/core_pattern", "/proc/sys/kernel/hostname",
                        "/proc/sys/vm/drop_caches", "/proc/sys/kernel/modprobe",
                        "/proc/sysrq-trigger", "/sys/kernel/uevent_helper", "/sys/power/state"}) {
    const std::string v = o.value(t);
    observed += std::string(observed.empty() ? "" : " ") + v;
    if (!one_of(v, {"EACCES", "EROFS", "ENOENT", "EPERM"})) {
      contained = false;
      ADD_FAILURE() << t << " = " << v << "\n" << o.describe();
    }
  }
  row("write_proc_sys_and_sys", "EACCES/EROFS/ENOENT/EPERM; host sysctls unchanged", observed,
      contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(Filesystem, NoDeviceNodes) {
  Outcome o = jail({}, {sec_probe("sec_fs"), "mknod"});
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  // gVisor lets mknod make nodes in its own tmpfs; they must not open a device.
  const bool nodes_inert =
      runsc() ? o.value("open_created_sda") != "OK" && o.value("open_created_mem") != "OK"
              : o.value("mknod_block_sda") == "EPERM" && o.value("mknod_char_mem") == "EPERM" &&
                    o.value("mknod_char_kmsg") == "EPERM";
  const bool contained = nodes_inert && one_of(o.value("open_dev_mem"), {"ENOENT", "EACCES"}) &&
                         one_of(o.value("open_dev_sda"), {"ENOENT", "EACCES"}) &&
                         one_of(o.value("open_dev_vda"), {"ENOENT", "EACCES"});
  row("mknod", "EPERM; /dev/mem,/dev/sda,/dev/vda ENOENT",
      o.value("mknod_block_sda") + "," + o.value("mknod_char_mem") + "," + o.value("open_dev_mem") +
          " open(node)=" + o.value("open_created_mem"),
      contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(Filesystem, RemountIsKilledByThePolicy) {
  Outcome o = jail({}, {sec_probe("sec_fs"), "remount"});
  const bool contained = o.run.exit_code == 159 && o.outcome() == "violation" &&
                         o.violation_syscall() == "mount" && o.value("remount_root_rw").empty();
  row("remount_rw (default policy)", "exit 159, violation mount",
      std::to_string(o.run.exit_code) + " " + o.outcome() + " " + o.violation_syscall(), contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(Filesystem, RemountIsRefusedByTheKernelToo) {
  // Without a policy: the tool has no capability over its mount namespace.
  Outcome o = jail(no_policy(), {sec_probe("sec_fs"), "remount"});
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  const bool contained = o.value("remount_root_rw") == "EPERM" &&
                         o.value("remount_usr_rw") == "EPERM" &&
                         o.value("remount_proc_suid") == "EPERM" &&
                         (o.value("mount_setattr_clear_rdonly") == "EPERM" ||
                          (runsc() && o.value("mount_setattr_clear_rdonly") == "ENOSYS")) &&
                         one_of(o.value("write_root"), {"EROFS", "EACCES"}) &&
                         one_of(o.value("write_usr"), {"EROFS", "EACCES"});
  row("remount_rw (--policy none)", "EPERM; writes EROFS/EACCES",
      o.value("remount_root_rw") + "," + o.value("mount_setattr_clear_rdonly") + "," +
          o.value("write_root"),
      contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(Filesystem, NestedNamespaceCannotUnlockReadOnlyMounts) {
  // In a user+mount namespace of its own the tool has CAP_SYS_ADMIN there, but the kernel locks
  // the flags of mounts it inherited (MNT_LOCK_READONLY): the root stays read-only.
  Outcome o = jail(no_policy(), {sec_probe("sec_fs"), "userns_remount"});
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  const std::string unshared = o.value("unshare_user_mount");
  const bool contained = one_of(o.value("remount_root_rw"), {"EPERM", "EACCES"}) &&
                         one_of(o.value("remount_usr_rw"), {"EPERM", "EACCES"}) &&
                         one_of(o.value("write_root"), {"EROFS", "EACCES"}) &&
                         one_of(o.value("write_usr"), {"EROFS", "EACCES"});
  row("nested_userns_remount (--policy none)", "remount EPERM, writes EROFS",
      "unshare=" + unshared + " remount=" + o.value("remount_root_rw") +
          " write=" + o.value("write_root"),
      contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(Filesystem, MountsDoNotPropagateToTheHost) {
  auto p = start(no_policy(), {sec_probe("sec_fs"), "propagate", "/tmp"});
  ASSERT_TRUE(p->wait_for_stdout("mounted=yes", 60s));
  const auto host = read_file("/proc/self/mountinfo");
  const auto init = read_file("/proc/1/mountinfo");
  Outcome o = finish(*p);
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  const bool contained = host && init && host->find("jail-sec-propagation") == std::string::npos &&
                         init->find("jail-sec-propagation") == std::string::npos &&
                         o.value("mount_tmpfs_direct") == "EPERM";
  row("mount_propagation (--policy none)", "direct mount EPERM; nothing in host mountinfo",
      "direct=" + o.value("mount_tmpfs_direct") + " nested=" + o.value("mount_tmpfs_nested") +
          " shared=" + o.value("mount_tmpfs_shared"),
      contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(Filesystem, SymlinkBindTargetIsNotFollowed) {
  // A bind target that is a symlink (here in the bound cwd, pointing at /etc): jail resolves
  // targets beneath the new root without following symlinks, so the bind never covers /etc.
  write_file(scratch_ / "payload", "payload\n");
  ASSERT_EQ(symlink("/etc", (cwd_ / "link").c_str()), 0);
  Outcome o = jail({"--ro-bind", scratch_.path() + ":" + (cwd_ / "link")},
                   {sec_probe("sec_info"), "paths", "/etc/payload", "/etc/passwd"});
  const bool refused = (o.run.exit_code == 125 && o.outcome() == "setup_error") || runsc_refused(o);
  const bool harmless = o.run.exit_code == 0 && o.value("open:/etc/payload") == "ENOENT" &&
                        o.value("open:/etc/passwd") == "OK";
  row("symlink_bind_target", "setup_error, or /etc untouched",
      refused
          ? "setup_error: " + (o.status.is_object() ? o.status["error"].dump() : "")
          : "exit " + std::to_string(o.run.exit_code) + " payload=" + o.value("open:/etc/payload"),
      refused || harmless);
  EXPECT_TRUE(refused || harmless) << o.describe();
}

TEST_P(Filesystem, SwappedBindTargetNeverLandsOnTheSymlinksTarget) {
  // The target flips between a directory and a symlink to /etc while jails start (the
  // runc CVE-2021-30465 pattern): every run either binds the directory or refuses.
  write_file(scratch_ / "payload", "payload\n");
  const std::string target = cwd_ / "target";
  const std::string as_dir = cwd_ / "as-dir";
  const std::string as_link = cwd_ / "as-link";
  std::atomic<bool> stop{false};
  std::thread flipper([&] {
    while (!stop) {
      mkdir(as_dir.c_str(), 0755);
      rename(as_dir.c_str(), target.c_str());
      std::filesystem::remove(as_link);
      symlink("/etc", as_link.c_str());
      std::error_code ignored;
      std::filesystem::remove(target, ignored);
      rename(as_link.c_str(), target.c_str());
      std::filesystem::remove(target, ignored);
    }
  });
  int bound = 0;
  int refused = 0;
  int escaped = 0;
  for (int i = 0; i < 12; ++i) {
    Outcome o = jail({"--ro-bind", scratch_.path() + ":" + target},
                     {sec_probe("sec_info"), "paths", "/etc/payload", target + "/payload"});
    if (o.run.exit_code == 0 && o.value("open:/etc/payload") == "OK") {
      ++escaped;
      ADD_FAILURE() << o.describe();
    } else if (o.run.exit_code == 0) {
      ++bound;
    } else if (o.run.exit_code == 125 || runsc_refused(o)) {
      ++refused;
    } else {
      ADD_FAILURE() << "unexpected\n" << o.describe();
    }
  }
  stop = true;
  flipper.join();
  row("swapped_bind_target", "bound in place or setup_error; never over /etc",
      "bound=" + std::to_string(bound) + " refused=" + std::to_string(refused) +
          " escaped=" + std::to_string(escaped),
      escaped == 0);
  EXPECT_EQ(escaped, 0);
}

TEST_P(Filesystem, HardLinksToHostFilesAreRefusedOrHarmless) {
  // A read-only bound file cannot be linked into the writable /tmp (another mount: EXDEV), and
  // a root-owned file in a read-write bind cannot be linked by its non-owner
  // (fs.protected_hardlinks; through a root caller's idmapped bind, whose map leaves root out,
  // the kernel refuses a link to an inode of an unmapped owner with EOVERFLOW); neither becomes
  // writable.
  TempDir rw;
  write_file(rw / "mine", "mine\n");
  const std::string root_only = rw / "root-only";
  write_file(root_only, "root\n", 0600);
  ASSERT_EQ(chown(root_only.c_str(), 0, 0), 0);
  write_file(scratch_ / "bound", "bound\n");
  Outcome ro = jail({"--ro-bind", scratch_.path() + ":/data"},
                    {sec_probe("sec_fs"), "link", "/data/bound", "/tmp/linked"});
  Outcome prot = jail({"--bind", rw.path() + ":/rw"},
                      {sec_probe("sec_fs"), "link", "/rw/root-only", "/rw/linked"});
  Outcome usr = jail({}, {sec_probe("sec_fs"), "link", "/usr/bin/passwd", "/tmp/passwd"});
  ASSERT_EQ(ro.run.exit_code, 0) << ro.describe();
  ASSERT_EQ(prot.run.exit_code, 0) << prot.describe();
  ASSERT_EQ(usr.run.exit_code, 0) << usr.describe();
  const bool contained = ro.value("link") == "EXDEV" &&
                         one_of(ro.value("write_src"), {"EROFS", "EACCES"}) &&
                         (one_of(prot.value("link"), {"EPERM", "EOVERFLOW"}) ||
                          (runsc() && prot.value("link") == "EACCES")) &&
                         prot.value("write_src") == "EACCES" && usr.value("link") == "EXDEV" &&
                         read_file(root_only) == std::optional<std::string>("root\n");
  row("hard_links", "ro bind EXDEV; root-owned EPERM or EOVERFLOW; /usr EXDEV",
      ro.value("link") + "," + prot.value("link") + "," + usr.value("link"), contained);
  EXPECT_TRUE(contained) << ro.describe() << prot.describe() << usr.describe();
}

TEST_P(Filesystem, SetuidBinaryRaisesNothing) {
  // A setuid-root, setgid-root copy of the probe (like /usr/bin/passwd) in a bound directory:
  // nosuid and no_new_privs keep every id and leave every capability set empty.
  TempDir dir;
  const std::string copy = dir / "suid";
  std::filesystem::copy_file(std::string(JAIL_PROBE_DIR) + "/sec_fs", copy);
  ASSERT_EQ(chown(copy.c_str(), 0, 0), 0);
  ASSERT_EQ(chmod(copy.c_str(), 06755), 0);
  Outcome o = jail({"--ro-bind", dir.path() + ":/suid"}, {"/suid/suid", "whoami"});
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  const std::string uid = o.value("uid");
  bool not_root = !uid.empty() && !o.value("gid").empty();
  for (const std::string& ids : {uid, o.value("gid")}) {
    std::size_t start = 0;
    while (start <= ids.size()) {
      std::size_t end = ids.find(',', start);
      if (end == std::string::npos) end = ids.size();
      if (ids.substr(start, end - start) == "0") not_root = false;
      start = end + 1;
    }
  }
  const bool contained = not_root && o.value("CapEff") == "0000000000000000" &&
                         o.value("CapPrm") == "0000000000000000" &&
                         (runsc() || o.value("NoNewPrivs") == "1");
  row("setuid_binary", "ids unchanged, caps empty, NoNewPrivs 1",
      "uid=" + uid + " gid=" + o.value("gid") + " CapEff=" + o.value("CapEff") +
          " NNP=" + o.value("NoNewPrivs"),
      contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(Filesystem, SetIdBitsCannotBeLeftOnTheHost) {
  // A set-id executable the tool leaves on a writable bind runs with its owner's ids for
  // anyone on the host: nobody's natively, and under runsc the tool's own (uid 1000, a real
  // user on many hosts). The baseline refuses the bits by chmod, fchmod and a create's mode.
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);  // whoever the tool is on the host
  const std::string script =
      "cp /bin/true /w/t; chmod 6755 /w/t; echo chmod=$?; install -m 4755 /bin/true /w/i; "
      "echo install=$?; python3 -c 'import os\ntry:\n os.open(\"/w/o\", os.O_CREAT | "
      "os.O_WRONLY, 0o2755); print(\"open=0\")\nexcept OSError as e: print(\"open=\" + "
      "str(e.errno))'";
  Outcome o = jail({"--bind", dir.path() + ":/w"}, {"/bin/sh", "-c", script});
  int set_id = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    struct stat info {};
    if (::lstat(entry.path().c_str(), &info) == 0 && (info.st_mode & (S_ISUID | S_ISGID)) != 0)
      ++set_id;
  }
  // The files are made (so the refusal is the bits', not the directory's), without the bits.
  const bool made = std::filesystem::exists(dir / "t") && std::filesystem::exists(dir / "i");
  const bool contained = o.run.exit_code == 0 && made && o.value("chmod") != "0" &&
                         o.value("install") != "0" && o.value("open") == "1" && set_id == 0;
  row("set_id_on_host", "chmod/install/open refused; no set-id file on the host",
      "chmod=" + o.value("chmod") + " install=" + o.value("install") + " open=" + o.value("open") +
          " set-id files=" + std::to_string(set_id),
      contained);
  EXPECT_TRUE(contained) << o.describe();
}

JAIL_SECURITY_INSTANTIATE(Filesystem);

}  // namespace
}  // namespace jail_security
