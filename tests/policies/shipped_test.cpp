// The shipped policies: they check clean, and real programs run under `default` in a forked
// child after no_new_privs — python3, sh with coreutils, gcc building hello.c, git.
#include <errno.h>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <filesystem>
#include <fstream>

#include "kernel_harness.hpp"
#include "policy/evaluate.hpp"
#include "policy/syscalls.hpp"
#include "policy/tools.hpp"

namespace jail::policy {
namespace {

using testing::ChildEnd;
using testing::run_program;
using testing::syscall_outcome;

const Program& default_program() {
  static const Program prog = compile(load_policy("default"), Routing::direct);
  return prog;
}

TEST(Shipped, EveryShippedPolicyLoadsCompilesAndLintsWithoutErrors) {
  for (const auto& name : shipped_policy_names()) {
    SCOPED_TRACE(name);
    Policy p = load_policy(name);
    EXPECT_NO_THROW((void)compile(p, Routing::direct));
    EXPECT_NO_THROW((void)compile(p, Routing::notify));
    auto findings = lint(p);
    EXPECT_FALSE(has_errors(findings)) << format(findings);
    EXPECT_TRUE(findings.empty()) << format(findings);
    // The jail installs the filter before execve: a policy that refuses it runs nothing.
    seccomp_data exec{};
    exec.arch = AUDIT_ARCH_X86_64;
    exec.nr = SYS_execve;
    EXPECT_EQ(evaluate(p, exec).action.kind, ActionKind::allow);
    // Each says at its top what it is for.
    EXPECT_EQ(p.sources.back().text.rfind("# " + name + ":", 0), 0u);
  }
}

TEST(Shipped, FilesOnDiskMatchTheEmbeddedCopies) {
  for (const auto& name : shipped_policy_names()) {
    Policy embedded = load_policy(name);
    Policy disk = load_policy(std::string(POLICY_SHIPPED_DIR) + "/" + name + ".policy");
    EXPECT_EQ(embedded.rules.size(), disk.rules.size()) << name;
  }
}

TEST(ShippedDefault, Python3Runs) {
  ChildEnd end = run_program(default_program(), {"/usr/bin/python3", "-c", "print(1)"});
  EXPECT_TRUE(end.exited) << "signal " << end.signal << "\n" << end.output;
  EXPECT_EQ(end.code, 0) << end.output;
  EXPECT_EQ(end.output, "1\n");
}

TEST(ShippedDefault, Python3ThreadsAndSubprocessRun) {
  ChildEnd end = run_program(
      default_program(),
      {"/usr/bin/python3", "-c",
       "import threading, subprocess, sys\n"
       "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
       "r = subprocess.run([sys.executable, '-c', 'print(2)'], capture_output=True, text=True)\n"
       "print(r.stdout.strip())\n"});
  EXPECT_EQ(end.code, 0) << "signal " << end.signal << "\n" << end.output;
  EXPECT_EQ(end.output, "2\n");
}

TEST(ShippedDefault, ShellAndCoreutilsRun) {
  ChildEnd end = run_program(
      default_program(), {"/bin/sh", "-c", "ls / && cat /etc/hostname >/dev/null && echo done"});
  EXPECT_EQ(end.code, 0) << "signal " << end.signal << "\n" << end.output;
  EXPECT_NE(end.output.find("usr\n"), std::string::npos) << end.output;
  EXPECT_NE(end.output.find("done\n"), std::string::npos) << end.output;
}

class ShippedDefaultTools : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/policy-shipped-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(ShippedDefaultTools, GccCompilesAndRunsHello) {
  std::ofstream(dir_ + "/hello.c") << "#include <stdio.h>\nint main(void) { puts(\"hello\"); }\n";
  ChildEnd cc = run_program(default_program(), {"/usr/bin/gcc", "-o", "hello", "hello.c"}, dir_);
  ASSERT_EQ(cc.code, 0) << "signal " << cc.signal << "\n" << cc.output;
  ChildEnd run = run_program(default_program(), {dir_ + "/hello"}, dir_);
  EXPECT_EQ(run.code, 0);
  EXPECT_EQ(run.output, "hello\n");
}

TEST_F(ShippedDefaultTools, GitInitAndStatusRun) {
  ChildEnd end =
      run_program(default_program(),
                  {"/bin/sh", "-c",
                   "export HOME=" + dir_ +
                       " && git init -q . && echo x > f && git add f && git status --short"},
                  dir_);
  EXPECT_EQ(end.code, 0) << "signal " << end.signal << "\n" << end.output;
  EXPECT_EQ(end.output, "A  f\n");
}

TEST(ShippedDefault, DangerousSyscallsAreKilled) {
  const char* names[] = {"ptrace",
                         "bpf",
                         "perf_event_open",
                         "kexec_load",
                         "kexec_file_load",
                         "init_module",
                         "finit_module",
                         "delete_module",
                         "mount",
                         "umount2",
                         "pivot_root",
                         "chroot",
                         "move_mount",
                         "open_tree",
                         "fsopen",
                         "fsmount",
                         "fsconfig",
                         "fspick",
                         "mount_setattr",
                         "setns",
                         "unshare",
                         "keyctl",
                         "add_key",
                         "request_key",
                         "userfaultfd",
                         "process_vm_readv",
                         "process_vm_writev",
                         "open_by_handle_at",
                         "io_uring_setup",
                         "io_uring_enter",
                         "io_uring_register",
                         "reboot",
                         "swapon",
                         "swapoff",
                         "acct"};
  for (const char* name : names) {
    SCOPED_TRACE(name);
    auto nr = syscall_number(name);
    ASSERT_TRUE(nr.has_value());
    EXPECT_EQ(syscall_outcome(default_program(), *nr, {}), -SIGSYS);
  }
}

TEST(ShippedDefault, PersonalityCloneIoctlSocketRules) {
  const Program& prog = default_program();
  EXPECT_EQ(syscall_outcome(prog, SYS_personality, {0xffffffff}), 0);
  EXPECT_EQ(syscall_outcome(prog, SYS_personality, {ADDR_NO_RANDOMIZE}), -SIGSYS);
  EXPECT_EQ(syscall_outcome(prog, SYS_clone3, {0, 0}), ENOSYS);
  EXPECT_EQ(syscall_outcome(prog, SYS_clone, {CLONE_NEWUSER | SIGCHLD}), -SIGSYS);
  EXPECT_EQ(syscall_outcome(prog, SYS_ioctl, {~0UL, TIOCSTI | (1UL << 32)}), EPERM);
  EXPECT_EQ(syscall_outcome(prog, SYS_ioctl, {~0UL, TIOCSTI}), EPERM);
  EXPECT_EQ(syscall_outcome(prog, SYS_socket, {AF_PACKET, SOCK_RAW, 0}), EAFNOSUPPORT);
  EXPECT_EQ(syscall_outcome(prog, SYS_socket, {AF_UNIX, SOCK_STREAM, 0}), 0);
  EXPECT_EQ(syscall_outcome(prog, SYS_seccomp,
                            {SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, 0}),
            EPERM);
  // Not named anywhere: the default.
  EXPECT_EQ(syscall_outcome(prog, SYS_sysfs, {}), EPERM);
}

TEST_F(ShippedDefaultTools, MinimalRunsAStaticFilterProgram) {
  // Built without the filter, run under `minimal`: stdin → stdout, nothing else.
  std::ofstream(dir_ + "/up.c")
      << "#include <stdio.h>\n#include <ctype.h>\n"
         "int main(void) { int c, n = 0;\n"
         "  while ((c = getchar()) != EOF) { putchar(toupper(c)); ++n; }\n"
         "  printf(\"%d bytes\\n\", n); return 0; }\n";
  std::string cmd = "gcc -static -O2 -o " + dir_ + "/up " + dir_ + "/up.c";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  Program prog = compile(load_policy("minimal"), Routing::direct);
  ChildEnd end = run_program(prog, {dir_ + "/up"}, dir_, "hello\n");
  EXPECT_TRUE(end.exited) << "signal " << end.signal;
  EXPECT_EQ(end.code, 0);
  EXPECT_EQ(end.output, "HELLO\n6 bytes\n");
}

TEST(ShippedMinimal, StaticStyleFilterWorkAndNothingElse) {
  Program prog = compile(load_policy("minimal"), Routing::direct);
  EXPECT_EQ(syscall_outcome(prog, SYS_getppid, {}), -SIGSYS);
  EXPECT_EQ(syscall_outcome(prog, SYS_read, {~0UL, 0, 0}), EBADF);
  EXPECT_EQ(syscall_outcome(prog, SYS_openat, {0, 0, 0}), -SIGSYS);
}

}  // namespace
}  // namespace jail::policy

namespace jail::policy {
namespace {

TEST(ShippedPython, ScriptsWithThreadsSubprocessAndSocketsRun) {
  Program prog = compile(load_policy("python"), Routing::direct);
  testing::ChildEnd end = testing::run_program(
      prog, {"/usr/bin/python3", "-c",
             "import threading, subprocess, sys, socket, json, tempfile, os\n"
             "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
             "a, b = socket.socketpair(); a.send(b'x'); assert b.recv(1) == b'x'\n"
             "with tempfile.TemporaryDirectory() as d:\n"
             "    open(os.path.join(d, 'f'), 'w').write('y')\n"
             "r = subprocess.run([sys.executable, '-c', 'print(3)'], capture_output=True, "
             "text=True)\n"
             "print(json.dumps(r.stdout.strip()))\n"});
  EXPECT_EQ(end.code, 0) << "signal " << end.signal << "\n" << end.output;
  EXPECT_EQ(end.output, "\"3\"\n");
  EXPECT_EQ(testing::syscall_outcome(prog, SYS_ptrace, {}), -SIGSYS);
  EXPECT_EQ(testing::syscall_outcome(prog, SYS_shmget, {}), EPERM);
}

}  // namespace
}  // namespace jail::policy
