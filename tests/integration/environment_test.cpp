// The environment inside: cleared, a safe default set, plus exactly what --env/--pass-env add.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <map>
#include <sstream>

#include "run_jail.hpp"

namespace jail_test {
namespace {

class Environment : public CallerTest {
 protected:
  // `env` inside, as a map; every line must be K=V.
  std::map<std::string, std::string> env_inside(const std::vector<std::string>& flags,
                                                RunOptions options = {}) {
    RunResult r = run(concat({flags, {"--", "env"}}), options);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    std::map<std::string, std::string> env;
    for (const std::string& line : split_lines(r.out)) {
      std::size_t eq = line.find('=');
      EXPECT_NE(eq, std::string::npos) << line;
      if (eq == std::string::npos) continue;
      EXPECT_FALSE(env.count(line.substr(0, eq))) << "twice: " << line << "\n" << r.out;
      env[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return env;
  }
};

std::string dump(const std::map<std::string, std::string>& env) {
  std::string text;
  for (const auto& [k, v] : env) text += k + "=" + v + "\n";
  return text;
}

TEST_P(Environment, DefaultSetOnly) {
  auto env = env_inside(
      {}, {.extra_env = {"TERM=xterm-256color", "LD_PRELOAD=/nonexistent.so", "HOME=/root"}});
  const std::map<std::string, std::string> expected = {
      {"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"HOME", "/tmp"}, {"LANG", "C.UTF-8"}};
  EXPECT_EQ(env, expected) << "inside:\n" << dump(env);
}

TEST_P(Environment, CallerVariablesDoNotLeak) {
  auto env = env_inside({});
  EXPECT_FALSE(env.count(kCallerSecretName)) << dump(env);
  EXPECT_FALSE(env.count("TERM")) << "TERM only when stdout is a tty\n" << dump(env);
}

TEST_P(Environment, EnvFlagAdds) {
  auto env = env_inside({"--env", "FOO=bar", "--env", "EMPTY=", "--env", "WITH_EQ=a=b"});
  EXPECT_EQ(env["FOO"], "bar") << dump(env);
  EXPECT_TRUE(env.count("EMPTY")) << dump(env);
  EXPECT_EQ(env["EMPTY"], "") << dump(env);
  EXPECT_EQ(env["WITH_EQ"], "a=b") << dump(env);
  EXPECT_EQ(env["PATH"], "/usr/local/bin:/usr/bin:/bin") << dump(env);
  EXPECT_FALSE(env.count(kCallerSecretName)) << dump(env);
}

TEST_P(Environment, EnvFlagOverridesADefault) {
  auto env = env_inside({"--env", "HOME=/home-inside", "--env", "LANG=C"});
  EXPECT_EQ(env["HOME"], "/home-inside") << dump(env);
  EXPECT_EQ(env["LANG"], "C") << dump(env);
}

TEST_P(Environment, PassEnvCopiesTheCallersValue) {
  auto env =
      env_inside({"--pass-env", kCallerSecretName}, {.extra_env = {"OTHER_CALLER_VAR=not-passed"}});
  EXPECT_EQ(env[kCallerSecretName], kCallerSecretValue) << dump(env);
  EXPECT_FALSE(env.count("OTHER_CALLER_VAR")) << dump(env);
}

// A pseudo-terminal to hand jail as its stdout; read back what the tool wrote to it.
class Terminal {
 public:
  Terminal() {
    master_ = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master_ < 0 || grantpt(master_) != 0 || unlockpt(master_) != 0) return;
    name_ = ptsname(master_);
    slave_ = open(name_.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
    fcntl(master_, F_SETFL, O_NONBLOCK);
  }
  ~Terminal() {
    if (slave_ >= 0) close(slave_);
    if (master_ >= 0) close(master_);
  }
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  [[nodiscard]] bool ok() const { return slave_ >= 0; }
  [[nodiscard]] int slave() const { return slave_; }
  [[nodiscard]] const std::string& name() const { return name_; }
  // Everything written so far, with the terminal's "\r\n" turned back into "\n".
  std::string drain() {
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = read(master_, buf, sizeof buf)) > 0;) {
      text.append(buf, static_cast<std::size_t>(n));
    }
    std::erase(text, '\r');
    return text;
  }

 private:
  int master_ = -1;
  int slave_ = -1;
  std::string name_;
};

// TERM goes along whenever the tool gets a terminal: with the caller's terminal on stdout, and
// with it on stdin only (stdout a pipe), where the tool got a pty and no TERM.
TEST_P(Environment, TermWhenTheToolHasATerminal) {
  Terminal terminal;
  ASSERT_TRUE(terminal.ok());
  RunResult r =
      run({"--", "env"}, {.stdout_fd = terminal.slave(), .extra_env = {"TERM=xterm-256color"}});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  std::string out = terminal.drain();
  EXPECT_NE(out.find("\nTERM="), std::string::npos) << "inside:\n" << out << describe(r);
  EXPECT_EQ(out.find(kCallerSecretName), std::string::npos) << out;

  RunResult in = run({"--", "sh", "-c", "test -t 0 && echo TERM=$TERM"},
                     {.stdin_fd = terminal.slave(), .extra_env = {"TERM=xterm-256color"}});
  EXPECT_EQ(in.exit_code, 0) << describe(in);
  EXPECT_NE(in.out.find("TERM=xterm-256color"), std::string::npos) << describe(in);
}

TEST_P(Environment, CallersTerminalIsNotHandedToTheTool) {
  // docs/architecture.md: the tool gets a relayed pty, never a caller's terminal. The same
  // terminal is the same device (st_rdev) on the same devpts instance (st_dev).
  Terminal terminal;
  ASSERT_TRUE(terminal.ok());
  struct stat host {};
  ASSERT_EQ(fstat(terminal.slave(), &host), 0);
  std::ostringstream caller;
  caller << host.st_dev << " " << std::hex << major(host.st_rdev) << " " << minor(host.st_rdev);
  RunResult r = run({"--", "stat", "-L", "-c", "%d %t %T", "/proc/self/fd/1"},
                    {.stdout_fd = terminal.slave()});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  std::string inside = trim(terminal.drain());
  EXPECT_FALSE(inside.empty()) << describe(r);
  EXPECT_NE(inside, caller.str()) << "the tool's stdout is the caller's terminal "
                                  << terminal.name();
}

TEST_P(Environment, ValuesAreNotInterpretedByAShell) {
  auto env = env_inside({"--env", "TRICKY=$(echo pwned); `id` 'q' \"d\" \\ *"});
  EXPECT_EQ(env["TRICKY"], "$(echo pwned); `id` 'q' \"d\" \\ *") << dump(env);
}

TEST_P(Environment, ArgumentsReachTheToolUnchanged) {
  RunResult r = run({"--", "printf", "[%s]\\n", "a b", "", "$HOME", "*", "--", "-v"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "[a b]\n[]\n[$HOME]\n[*]\n[--]\n[-v]\n") << describe(r);
}

JAIL_INSTANTIATE_FOR_CALLERS(Environment);

}  // namespace
}  // namespace jail_test
