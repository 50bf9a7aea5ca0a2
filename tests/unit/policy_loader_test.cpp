// jail's in-sandbox policy loader (runsc/policy_loader.hpp), the very bytes libjail writes into a
// gVisor bundle, run here on the host kernel, which applies a seccomp filter as gVisor's sentry
// does: the tool runs under the policy and never sees the program's variable; every failure
// ends the run before the tool with jail's exit codes (125 policy, 127 not found, 126 not
// executable) and a message naming what failed.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "policy/compile.hpp"
#include "policy/policy.hpp"
#include "runsc/policy_loader.hpp"

namespace {

namespace fs = std::filesystem;

struct Ran {
  int status = -1;
  std::string out;  // stdout and stderr together
};

class PolicyLoader : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "jail-loader-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    fs::create_directory(dir_ / "rootfs");
    jail::write_policy_loader(dir_ / "rootfs");
    loader_ = (dir_ / "rootfs" / jail::kPolicyLoaderPath.substr(1)).string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the loader with `args` after its own name and `env` as its whole environment, as
  // `uid` (and the same gid) when one is given.
  Ran run(const std::vector<std::string>& args, const std::vector<std::string>& env,
          std::optional<uid_t> uid = std::nullopt) {
    const fs::path output = dir_ / "output";
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      if (uid && (::setgroups(0, nullptr) != 0 || ::setgid(*uid) != 0 || ::setuid(*uid) != 0))
        ::_exit(98);
      std::vector<char*> argv{loader_.data()};
      for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
      argv.push_back(nullptr);
      std::vector<char*> envp;
      for (const std::string& entry : env) envp.push_back(const_cast<char*>(entry.c_str()));
      envp.push_back(nullptr);
      ::execve(loader_.c_str(), argv.data(), envp.data());
      ::_exit(99);
    }
    Ran ran;
    ::waitpid(pid, &ran.status, 0);
    std::ifstream in(output);
    ran.out.assign(std::istreambuf_iterator<char>(in), {});
    return ran;
  }

  static jail::policy::Program compiled(const std::string& text) {
    return jail::policy::compile(jail::policy::parse_policy(text, "test.policy"),
                                 jail::policy::Routing::direct);
  }

  static int exit_code(const Ran& ran) {
    return WIFEXITED(ran.status) ? WEXITSTATUS(ran.status) : -1;
  }

  fs::path dir_;
  std::string loader_;
};

// What the probe prints: getppid's result and errno under the filter (through syscall(), which
// sets errno; glibc's getppid() does not), and whether the program's variable reached it.
const std::vector<std::string> kProbe = {
    "/usr/bin/python3", "python3", "-c",
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "print(libc.syscall(110), ctypes.get_errno(), os.environ.get('JAIL_SECCOMP_PROGRAM'),\n"
    "      os.environ.get('KEPT'), sep=',')\n"};

TEST_F(PolicyLoader, TheToolRunsUnderThePolicyWithoutItsVariable) {
  const jail::policy::Program program = compiled("default allow\nerrno EXDEV getppid\n");
  const Ran ran = run(kProbe, {jail::policy_program_entry(program), "KEPT=yes"});
  EXPECT_EQ(exit_code(ran), 0) << ran.out;
  EXPECT_EQ(ran.out, "-1,18,None,yes\n");
  // The same probe without a rule on getppid: the filter is the policy's, not something else.
  const Ran allowed = run(kProbe, {jail::policy_program_entry(compiled("default allow\n"))});
  EXPECT_NE(allowed.out.find(",0,None,None"), std::string::npos) << allowed.out;
  EXPECT_EQ(allowed.out.find("-1,"), std::string::npos) << allowed.out;
  // An unprivileged caller's tool too: the loader sets no_new_privs itself, which a filter
  // from a task without CAP_SYS_ADMIN needs.
  if (::geteuid() == 0) {
    fs::permissions(dir_, fs::perms::owner_all | fs::perms::others_exec);
    const Ran nobody = run(kProbe, {jail::policy_program_entry(program)}, 65534);
    EXPECT_EQ(exit_code(nobody), 0) << nobody.out;
    EXPECT_EQ(nobody.out, "-1,18,None,None\n");
  }
}

TEST_F(PolicyLoader, AKillRuleEndsTheTool) {
  const Ran ran =
      run(kProbe, {jail::policy_program_entry(compiled("default allow\nkill getppid\n"))});
  ASSERT_TRUE(WIFSIGNALED(ran.status)) << ran.out;
  EXPECT_EQ(WTERMSIG(ran.status), SIGSYS);
}

TEST_F(PolicyLoader, WithoutAUsableProgramTheToolNeverRuns) {
  const fs::path marker = dir_ / "ran";
  const std::vector<std::string> tool = {"/bin/sh", "sh", "-c", "touch " + marker.string()};
  const std::string good = jail::policy_program_entry(compiled("default allow\n"));
  for (const std::vector<std::string>& env :
       {std::vector<std::string>{},
        {"JAIL_SECCOMP_PROGRAM="},
        {good.substr(0, good.size() - 1)},                    // not whole instructions
        {good.substr(0, good.size() - 2) + "zz"},             // not hex
        {"JAIL_SECCOMP_PROGRAM=" + std::string(16, '0')}}) {  // one instruction: ld, no ret
    SCOPED_TRACE(env.empty() ? "no variable" : env.front().substr(0, 40));
    const Ran ran = run(tool, env);
    EXPECT_EQ(exit_code(ran), 125) << ran.out;
    EXPECT_NE(ran.out.find("jail: in the gVisor sandbox: cannot load the policy"),
              std::string::npos)
        << ran.out;
    EXPECT_FALSE(fs::exists(marker)) << "the tool ran without its filter";
  }
  const Ran usage = run({"/bin/true"}, {good});
  EXPECT_EQ(exit_code(usage), 125) << usage.out;
  EXPECT_NE(usage.out.find("usage: load-policy PATH ARGV0"), std::string::npos) << usage.out;
}

TEST_F(PolicyLoader, AnExecThatFailsIsNamedWithJailsExitCodes) {
  const std::string good = jail::policy_program_entry(compiled("default allow\n"));
  const Ran missing = run({"/no/such/tool", "tool"}, {good});
  EXPECT_EQ(exit_code(missing), 127) << missing.out;
  EXPECT_EQ(missing.out, "jail: in the gVisor sandbox: cannot execute /no/such/tool (errno 2)\n");
  const Ran not_executable = run({"/etc/passwd", "passwd"}, {good});
  EXPECT_EQ(exit_code(not_executable), 126) << not_executable.out;
  EXPECT_NE(not_executable.out.find("cannot execute /etc/passwd (errno 13)"), std::string::npos)
      << not_executable.out;
}

TEST_F(PolicyLoader, IsWrittenWhole) {
  struct stat info {};
  ASSERT_EQ(::stat(loader_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0555u);
  EXPECT_EQ(static_cast<std::size_t>(info.st_size), jail::kPolicyLoaderProgramSize);
  // A second loader in the same rootfs is refused, not written over.
  EXPECT_THROW(jail::write_policy_loader(dir_ / "rootfs"), std::exception);
}

TEST(PolicyLoaderProgram, LogActionsAreNotForGvisor) {
  const auto compiled = [](const std::string& text) {
    return jail::policy::compile(jail::policy::parse_policy(text, "test.policy"),
                                 jail::policy::Routing::direct);
  };
  EXPECT_TRUE(jail::loadable_in_gvisor(compiled("default errno EPERM\nallow read\nkill ptrace\n")));
  EXPECT_FALSE(jail::loadable_in_gvisor(compiled("default allow\nlog uname\n")));
  EXPECT_FALSE(jail::loadable_in_gvisor(compiled("default log\n")));
}

TEST(PolicyLoaderProgram, TheEntryCarriesTheInstructionsAsHex) {
  jail::policy::Program program;
  program.instructions = {{BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW}};
  // code 0x0006, jt 0, jf 0, k 0x7fff0000, little-endian.
  EXPECT_EQ(jail::policy_program_entry(program), "JAIL_SECCOMP_PROGRAM=060000000000ff7f");
}

}  // namespace
