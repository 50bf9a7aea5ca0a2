// Issue 3 through the real binary: the shipped `minimal` and `python` policies run what they
// are for; policies jail cannot use are refused before anything runs (exit 125) with diagnostics
// that point at the text; `--policy none` warns loudly and runs without a filter.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_jail.hpp"

namespace jail_test {
namespace {

using nlohmann::json;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `line` followed directly by a line that is `column - 1` spaces and a caret.
bool caret_under(const std::string& text, const std::string& line, int column) {
  return has(text, line + "\n" + std::string(static_cast<std::size_t>(column - 1), ' ') + "^\n");
}

class SeccompShipped : public CallerTest {
 protected:
  // Runs with a status file; parses it into `status` (an empty object when there is none).
  RunResult run_status(const std::vector<std::string>& args, json& status,
                       RunOptions options = {}) {
    const std::string status_path = dir_ / "status.json";
    std::remove(status_path.c_str());
    RunResult r = run(concat({{"--status-file", status_path}, args}), options);
    std::optional<std::string> text = read_file(status_path);
    status = text ? json::parse(*text, nullptr, false) : json::object();
    if (!status.is_object()) status = json::object();
    return r;
  }

  // A policy jail refuses: exit 125, outcome setup_error in step "policy", the tool never ran.
  RunResult expect_refused(const std::string& policy) {
    json s;
    RunResult r = run_status({"--policy", policy, "--", "sh", "-c", "echo the tool ran"}, s);
    EXPECT_EQ(r.exit_code, 125) << describe(r);
    EXPECT_FALSE(has(r.out, "the tool ran")) << describe(r);
    EXPECT_EQ(s.value("outcome", ""), "setup_error") << s.dump();
    if (s.contains("error") && s["error"].is_object()) {
      EXPECT_EQ(s["error"].value("step", ""), "policy") << s.dump();
    } else {
      ADD_FAILURE() << "no error object in the status: " << s.dump();
    }
    return r;
  }

  TempDir dir_;
};

// A static stdin-to-stdout filter, built here: tests/CMakeLists.txt builds probes dynamically.
// With an argument "open" it opens a file instead, which `minimal` does not allow.
constexpr const char* kUppercase = R"c(
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "open") == 0) {
    int fd = open("/etc/hostname", O_RDONLY);
    printf("open returned %d\n", fd);
    return 3;
  }
  char buf[4096];
  ssize_t n;
  while ((n = read(0, buf, sizeof buf)) > 0) {
    for (ssize_t i = 0; i < n; ++i) buf[i] = (char)toupper((unsigned char)buf[i]);
    if (write(1, buf, (size_t)n) != n) return 1;
  }
  return 0;
}
)c";

TEST_P(SeccompShipped, MinimalRunsAStaticFilter) {
  write_file(dir_ / "upper.c", kUppercase);
  const std::string build = "gcc -static -O2 -o " + (dir_ / "upper") + " " + (dir_ / "upper.c");
  ASSERT_EQ(std::system(build.c_str()), 0)
      << "cannot build a static program (gcc and libc.a needed): " << build;
  const std::vector<std::string> bind = {"--ro-bind", dir_.path() + ":/static"};

  json s;
  RunOptions in;
  in.stdin_data = "hello minimal\nsecond line\n";
  RunResult r = run_status(concat({{"--policy", "minimal"}, bind, {"--", "/static/upper"}}), s, in);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "HELLO MINIMAL\nSECOND LINE\n") << describe(r);
  EXPECT_EQ(s.value("outcome", ""), "exited") << s.dump();

  // Anything beyond reading and writing the standard streams ends it, named.
  r = run_status(concat({{"--policy", "minimal"}, bind, {"--", "/static/upper", "open"}}), s);
  EXPECT_EQ(r.exit_code, 159) << describe(r);
  EXPECT_FALSE(has(r.out, "open returned")) << describe(r);
  EXPECT_EQ(s.value("outcome", ""), "violation") << s.dump();
  ASSERT_TRUE(s["violation"].is_object()) << s.dump();
  EXPECT_EQ(s["violation"].value("syscall", ""), "openat") << s.dump();
  EXPECT_TRUE(has(r.err, "by policy minimal.policy:")) << describe(r);
}

// What `minimal` is not for: a dynamically linked program. The loader's first file access is
// killed before main(), and the report names that call.
TEST_P(SeccompShipped, MinimalKillsADynamicProgramBeforeMain) {
  json s;
  RunResult r = run_status(
      concat({{"--policy", "minimal"}, probe_mount(), {"--", probe("sc_raw"), "39"}}), s);
  EXPECT_EQ(r.exit_code, 159) << describe(r);
  EXPECT_FALSE(has(r.out, "calling")) << "main() ran\n" << describe(r);
  EXPECT_EQ(s.value("outcome", ""), "violation") << s.dump();
  ASSERT_TRUE(s["violation"].is_object()) << s.dump();
  const std::string syscall = s["violation"].value("syscall", "");
  std::printf("[ measured ] a dynamic program under minimal is killed at %s\n", syscall.c_str());
  EXPECT_TRUE(syscall == "access" || syscall == "openat" || syscall == "open") << s.dump();
}

TEST_P(SeccompShipped, PythonRunsThreadsSocketpairAndSubprocess) {
  ASSERT_EQ(access("/usr/bin/python3", X_OK), 0) << "python3 is not installed at /usr/bin/python3";
  write_file(cwd_ / "script.py", R"py(
import socket, subprocess, sys, threading
squares = []
threads = [threading.Thread(target=lambda i=i: squares.append(i * i)) for i in range(4)]
for t in threads: t.start()
for t in threads: t.join()
a, b = socket.socketpair()
a.sendall(b"ping")
print("socketpair", b.recv(4).decode())
child = subprocess.run([sys.executable, "-c", "print('child', 6 * 7)"],
                       capture_output=True, text=True, check=True)
print(child.stdout.strip())
print("threads", sorted(squares))
try:
    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    print("netlink opened")
except OSError as e:
    print("netlink errno", e.errno)
)py");
  json s;
  RunResult r = run_status({"--policy", "python", "--", "/usr/bin/python3", "script.py"}, s);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  // AF_NETLINK: python.policy refuses it with EAFNOSUPPORT (97), unlike default.
  EXPECT_EQ(r.out, "socketpair ping\nchild 42\nthreads [0, 1, 4, 9]\nnetlink errno 97\n")
      << describe(r);
  EXPECT_EQ(s.value("outcome", ""), "exited") << s.dump();
  std::printf("[ measured ] python policy run: denials count %ld\n",
              s.contains("denials") ? s["denials"].value("count", -1L) : -1L);
}

TEST_P(SeccompShipped, PythonKillsPtrace) {
  json s;
  RunResult r = run_status({"--policy", "python", "--", "/usr/bin/python3", "-c",
                            "import ctypes; print(ctypes.CDLL(None).syscall(101, 16, 1))"},
                           s);
  EXPECT_EQ(r.exit_code, 159) << describe(r);
  EXPECT_EQ(s.value("outcome", ""), "violation") << s.dump();
  ASSERT_TRUE(s["violation"].is_object()) << s.dump();
  EXPECT_EQ(s["violation"].value("syscall", ""), "ptrace") << s.dump();
  EXPECT_TRUE(has(r.err, "by policy python.policy:")) << describe(r);
}

TEST_P(SeccompShipped, SyntaxErrorsAllReportedWithCarets) {
  const std::string path = dir_ / "broken.policy";
  write_file(path,
             "# a broken policy\n"
             "alow read\n"
             "include \"default\"\n"
             "allow getpidd\n"
             "errno EPERM ioctl if arg1 == TCGETZ\n"
             "allow read if arg0 ==\n");
  RunResult r = expect_refused(path);
  EXPECT_TRUE(has(r.err, path + ":2:1: unknown action 'alow'")) << describe(r);
  EXPECT_TRUE(caret_under(r.err, "alow read", 1)) << describe(r);
  EXPECT_TRUE(has(r.err, path + ":4:7: unknown syscall 'getpidd' (did you mean getpid?)"))
      << describe(r);
  EXPECT_TRUE(caret_under(r.err, "allow getpidd", 7)) << describe(r);
  EXPECT_TRUE(has(r.err, path + ":5:30: unknown constant 'TCGETZ' (did you mean TCGETS?)"))
      << describe(r);
  EXPECT_TRUE(caret_under(r.err, "errno EPERM ioctl if arg1 == TCGETZ", 30)) << describe(r);
  EXPECT_TRUE(has(r.err, path + ":6:22: ")) << describe(r);
  EXPECT_TRUE(caret_under(r.err, "allow read if arg0 ==", 22)) << describe(r);
}

TEST_P(SeccompShipped, IncludeCycleRefused) {
  write_file(dir_ / "a.policy", "include \"b.policy\"\n");
  write_file(dir_ / "b.policy", "include \"a.policy\"\n");
  RunResult r = expect_refused(dir_ / "a.policy");
  EXPECT_TRUE(has(r.err, "include cycle")) << describe(r);
  EXPECT_TRUE(has(r.err, (dir_ / "b.policy") + ":1:9: ")) << describe(r);
}

// jail installs the filter before execve and must be able to report a failed start.
TEST_P(SeccompShipped, PolicyWithoutWhatJailNeedsRefused) {
  const std::vector<std::pair<std::string, std::string>> missing = {
      {"execve", "allow read write exit_group\n"},
      {"write", "allow execve read exit_group\n"},
      {"exit_group", "allow execve read write\n"},
  };
  for (const auto& [call, rules] : missing) {
    SCOPED_TRACE("without " + call);
    const std::string path = dir_ / ("no_" + call + ".policy");
    write_file(path, "default errno EPERM\n" + rules);
    RunResult r = expect_refused(path);
    EXPECT_TRUE(has(r.err, "must allow " + call + " (")) << describe(r);
  }
}

TEST_P(SeccompShipped, UnknownPolicyNameListsShipped) {
  RunResult r = expect_refused("nosuch");
  EXPECT_TRUE(has(r.err, "nosuch")) << describe(r);
  for (const char* name : {"default", "minimal", "python"}) {
    EXPECT_TRUE(has(r.err, name)) << name << "\n" << describe(r);
  }
}

// none: a loud warning, no filter at all (Seccomp: 0), and a call default kills goes through.
TEST_P(SeccompShipped, NoneWarnsAndRunsUnfiltered) {
  json s;
  RunResult r = run_status(concat({{"--policy", "none"},
                                   probe_mount(),
                                   {"--", "sh", "-c",
                                    "grep '^Seccomp:' /proc/self/status && " + probe("sc_raw") +
                                        " " + std::to_string(SYS_unshare) + " 0"}}),
                           s);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(has(r.err, "--policy none")) << describe(r);
  EXPECT_TRUE(has(r.err, "WITHOUT a seccomp filter")) << describe(r);
  EXPECT_TRUE(has(r.out, "Seccomp:\t0\n")) << describe(r);
  EXPECT_TRUE(has(r.out, "result 0 ret=0 errno=0\n")) << describe(r);
  EXPECT_EQ(s.value("outcome", ""), "exited") << s.dump();
  EXPECT_EQ(s.contains("denials") ? s["denials"].value("count", -1L) : -1L, 0) << s.dump();
}

JAIL_INSTANTIATE_FOR_CALLERS(SeccompShipped);

}  // namespace
}  // namespace jail_test
