// jail's in-sandbox policy loader (runsc/policy_loader.hpp), the very bytes libjail writes into a
// gVisor bundle, run here on the host kernel, which applies a seccomp filter as gVisor's sentry
// does: the tool runs under the policy with its own environment; every failure ends the run
// before the tool with jail's exit codes (125 policy, 127 not found, 126 not executable) and a
// message naming what failed.
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
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;

struct Ran {
  int status = -1;
  std::string out;  // stdout and stderr together
};

class PolicyLoader : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directory(dir_ / "rootfs");
    jail::write_policy_loader(dir_ / "rootfs", compiled("default allow\n"));
    loader_ = (dir_ / "rootfs" / jail::kPolicyLoaderPath.substr(1)).string();
  }

  // The file the loader is pointed at, holding `bytes`.
  std::string program_file(const std::string& bytes) {
    const fs::path path = dir_ / ("program" + std::to_string(++programs_));
    std::ofstream(path, std::ios::binary) << bytes;
    fs::permissions(path, fs::perms::owner_read | fs::perms::others_read);
    return path.string();
  }
  std::string program_file(const jail::policy::Program& program) {
    return program_file(std::string(reinterpret_cast<const char*>(program.instructions.data()),
                                    program.instructions.size() * sizeof(sock_filter)));
  }

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

  jail::TempDir temp_{"jail-test-loader"};  // removed with all in it when the test ends
  fs::path dir_ = temp_.path();
  std::string loader_;
  int programs_ = 0;
};

// What the probe prints: getppid's result and errno under the filter (through syscall(), which
// sets errno; glibc's getppid() does not), and two variables of its environment.
const std::vector<std::string> kProbeArgv = {
    "/usr/bin/python3", "python3", "-c",
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "print(libc.syscall(110), ctypes.get_errno(), os.environ.get('FIRST'),\n"
    "      os.environ.get('KEPT'), sep=',')\n"};

// The loader's arguments: the program file, then the tool's path and argv.
std::vector<std::string> with_program(const std::string& file, std::vector<std::string> tool) {
  tool.insert(tool.begin(), file);
  return tool;
}

TEST_F(PolicyLoader, TheToolRunsUnderThePolicyWithItsOwnEnvironment) {
  const std::string program = program_file(compiled("default allow\nerrno EXDEV getppid\n"));
  const Ran ran = run(with_program(program, kProbeArgv), {"FIRST=1", "KEPT=yes"});
  EXPECT_EQ(exit_code(ran), 0) << ran.out;
  EXPECT_EQ(ran.out, "-1,18,1,yes\n");
  // The same probe without a rule on getppid: the filter is the policy's, not something else.
  const Ran allowed =
      run(with_program(program_file(compiled("default allow\n")), kProbeArgv), {"FIRST=1"});
  EXPECT_NE(allowed.out.find(",0,1,None"), std::string::npos) << allowed.out;
  EXPECT_EQ(allowed.out.find("-1,"), std::string::npos) << allowed.out;
  // An unprivileged caller's tool too: the loader sets no_new_privs itself, which a filter
  // from a task without CAP_SYS_ADMIN needs.
  if (::geteuid() == 0) {
    fs::permissions(dir_, fs::perms::owner_all | fs::perms::others_exec);
    const Ran nobody = run(with_program(program, kProbeArgv), {}, 65534);
    EXPECT_EQ(exit_code(nobody), 0) << nobody.out;
    EXPECT_EQ(nobody.out, "-1,18,None,None\n");
  }
}

TEST_F(PolicyLoader, AKillRuleEndsTheTool) {
  const Ran ran =
      run(with_program(program_file(compiled("default allow\nkill getppid\n")), kProbeArgv), {});
  ASSERT_TRUE(WIFSIGNALED(ran.status)) << ran.out;
  EXPECT_EQ(WTERMSIG(ran.status), SIGSYS);
}

TEST_F(PolicyLoader, WithoutAUsableProgramTheToolNeverRuns) {
  const fs::path marker = dir_ / "ran";
  const std::vector<std::string> tool = {"/bin/sh", "sh", "-c", "touch " + marker.string()};
  const jail::policy::Program good = compiled("default allow\n");
  const std::string bytes(reinterpret_cast<const char*>(good.instructions.data()),
                          good.instructions.size() * sizeof(sock_filter));
  struct Case {
    std::string name, file, words;
  };
  for (const Case& bad : {
           Case{"no file", (dir_ / "none").string(), "cannot open the policy's program"},
           Case{"empty", program_file(""), "the policy's program is not whole BPF instructions"},
           Case{"a part of an instruction", program_file(bytes.substr(0, bytes.size() - 1)),
                "the policy's program is not whole BPF instructions"},
           Case{"too long", program_file(std::string(8 * (BPF_MAXINSNS + 1), '\0')),
                "the policy's program is not whole BPF instructions (at most 4096)"},
           Case{"no return", program_file(std::string(8, '\0')),
                "cannot load the policy's seccomp filter: EINVAL"},
           Case{"a directory", dir_.string(), "cannot read the policy's program"},
       }) {
    SCOPED_TRACE(bad.name);
    const Ran ran = run(with_program(bad.file, tool), {});
    EXPECT_EQ(exit_code(ran), 125) << ran.out;
    EXPECT_NE(ran.out.find("jail: in the gVisor sandbox: " + bad.words), std::string::npos)
        << ran.out;
    EXPECT_FALSE(fs::exists(marker)) << "the tool ran without its filter";
  }
  const Ran usage = run({program_file(good), "/bin/true"}, {});
  EXPECT_EQ(exit_code(usage), 125) << usage.out;
  EXPECT_NE(usage.out.find("usage: load-policy PROGRAM PATH ARGV0"), std::string::npos)
      << usage.out;
}

TEST_F(PolicyLoader, AnExecThatFailsIsNamedWithJailsExitCodes) {
  const std::string program = program_file(compiled("default allow\n"));
  const Ran missing = run({program, "/no/such/tool", "tool"}, {});
  EXPECT_EQ(exit_code(missing), 127) << missing.out;
  EXPECT_EQ(missing.out,
            "jail: in the gVisor sandbox: cannot execute /no/such/tool: ENOENT: no such file or "
            "directory\n");
  const Ran not_executable = run({program, "/etc/passwd", "passwd"}, {});
  EXPECT_EQ(exit_code(not_executable), 126) << not_executable.out;
  EXPECT_NE(not_executable.out.find("cannot execute /etc/passwd: EACCES: permission denied"),
            std::string::npos)
      << not_executable.out;
}

TEST_F(PolicyLoader, IsWrittenWholeWhateverTheUmask) {
  const jail::policy::Program program = compiled("default errno EPERM\nallow read write\n");
  const fs::path rootfs = dir_ / "private-rootfs";
  fs::create_directory(rootfs);
  const mode_t old_umask = ::umask(077);
  jail::write_policy_loader(rootfs, program);
  ::umask(old_umask);
  struct stat info {};
  ASSERT_EQ(::stat((rootfs / jail::kPolicyLoaderDirectory.substr(1)).c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0755u);
  ASSERT_EQ(::stat((rootfs / jail::kPolicyLoaderPath.substr(1)).c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0555u);
  EXPECT_EQ(static_cast<std::size_t>(info.st_size), jail::kPolicyLoaderProgramSize);
  ASSERT_EQ(::stat((rootfs / jail::kPolicyProgramPath.substr(1)).c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0444u);
  std::ifstream in(rootfs / jail::kPolicyProgramPath.substr(1), std::ios::binary);
  const std::string written(std::istreambuf_iterator<char>(in), {});
  EXPECT_EQ(written, std::string(reinterpret_cast<const char*>(program.instructions.data()),
                                 program.instructions.size() * sizeof(sock_filter)));
  // A second loader in the same rootfs is refused, not written over.
  EXPECT_THROW(jail::write_policy_loader(rootfs, program), std::exception);
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

}  // namespace
