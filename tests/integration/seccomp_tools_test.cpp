// Issue 3: under the shipped `default` policy (no --policy flag) ordinary tools run cleanly:
// python3 with threads and subprocesses, sh with pipes, coreutils, gcc compiling and running
// hello.c, git init/commit/status. Each run exits 0 with outcome "exited" and no violation; the
// denials it caused (clone3 → ENOSYS for threads, for instance) are printed. The coreutils run
// also checks that a filter is in force (Seccomp: 2 in /proc/self/status).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "run_jail.hpp"

namespace jail_test {
namespace {

using nlohmann::json;

class SeccompTools : public CallerTest {
 protected:
  // Runs `command` under the default policy with a status file; checks it ran cleanly and prints
  // the denials it caused. Returns jail's stdout.
  std::string run_cleanly(const std::string& what, const std::vector<std::string>& command) {
    const std::string status_path = status_dir_ / "status.json";
    RunResult r = run(concat({{"--status-file", status_path, "--"}, command}));
    EXPECT_EQ(r.exit_code, 0) << what << "\n" << describe(r);
    std::optional<std::string> text = read_file(status_path);
    if (!text) {
      ADD_FAILURE() << "no status file\n" << describe(r);
      return r.out;
    }
    json s = json::parse(*text, nullptr, false);
    if (!s.is_object()) {
      ADD_FAILURE() << "status is no JSON object: " << *text;
      return r.out;
    }
    EXPECT_EQ(s.value("outcome", ""), "exited") << *text;
    EXPECT_TRUE(s["violation"].is_null()) << *text;
    std::set<std::string> kinds;
    for (const json& d : s["denials"]["first"]) {
      kinds.insert(d.value("syscall", "?") + " → " + d.value("action", "?"));
    }
    std::string listed;
    for (const std::string& k : kinds) listed += (listed.empty() ? "" : ", ") + k;
    std::printf("[ measured ] %s (%s): denials count %ld%s%s\n", what.c_str(),
                as_root() ? "root" : "unprivileged", s["denials"].value("count", -1L),
                listed.empty() ? "" : ": ", listed.c_str());
    EXPECT_TRUE(s["denials"]["count"].is_number_integer()) << *text;
    return r.out;
  }

  static bool executable(const char* path) { return access(path, X_OK) == 0; }

  TempDir status_dir_;
};

TEST_P(SeccompTools, Python3ThreadsAndSubprocess) {
  ASSERT_TRUE(executable("/usr/bin/python3")) << "python3 is not installed at /usr/bin/python3";
  const char* script = R"sh(
import subprocess, sys, threading
squares = []
threads = [threading.Thread(target=lambda i=i: squares.append(i * i)) for i in range(4)]
for t in threads: t.start()
for t in threads: t.join()
child = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True, check=True)
echo = subprocess.run(["echo", "from echo"], capture_output=True, text=True, check=True)
print("threads", sorted(squares))
print("child", child.stdout.strip())
print(echo.stdout.strip())
)sh";
  std::string out = run_cleanly("python3", {"/usr/bin/python3", "-c", script});
  EXPECT_EQ(out, "threads [0, 1, 4, 9]\nchild 42\nfrom echo\n");
}

TEST_P(SeccompTools, ShWithPipes) {
  std::string out =
      run_cleanly("sh", {"sh", "-c",
                         "printf 'c\\nb\\na\\n' | sort | head -n 2 | tr '\\n' ' '; echo; "
                         "echo abc | cat | wc -c; x=$(echo sub | tr a-z A-Z); echo \"$x\""});
  EXPECT_EQ(out, "a b \n4\nSUB\n");
}

TEST_P(SeccompTools, Coreutils) {
  const char* script = R"sh(set -e
cd /tmp
f=$(mktemp)
printf 'pear\napple\nfig\n' > "$f"
sort "$f" | tr '\n' ' '; echo
wc -l < "$f"
ls "$f" > /dev/null && echo listed
date +%Y | grep -Eq '^[0-9]{4}$' && echo dated
cat "$f" | head -n 1
cp "$f" g && mv g h && rm h && echo moved
grep -Eq '^Seccomp:[[:space:]]+2$' /proc/self/status && echo filtered
)sh";
  std::string out = run_cleanly("coreutils", {"sh", "-c", script});
  EXPECT_EQ(out, "apple fig pear \n3\nlisted\ndated\npear\nmoved\nfiltered\n");
}

TEST_P(SeccompTools, GccCompilesAndRunsHello) {
  if (!executable("/usr/bin/gcc")) {
    std::printf("gcc is missing on this host (/usr/bin/gcc): this acceptance point is unproven\n");
    FAIL() << "gcc is not installed";
  }
  write_file(cwd_ / "hello.c",
             "#include <stdio.h>\nint main(void) { puts(\"hello from gcc\"); return 0; }\n");
  std::string out = run_cleanly(
      "gcc", {"sh", "-c", "cp hello.c /tmp/ && cd /tmp && gcc -O1 -o hello hello.c && ./hello"});
  EXPECT_EQ(out, "hello from gcc\n");
}

TEST_P(SeccompTools, GitInitCommitStatus) {
  ASSERT_TRUE(executable("/usr/bin/git")) << "git is not installed at /usr/bin/git";
  const char* script = R"sh(set -e
cd /tmp
git init -q repo
cd repo
git status --short
echo hi > a
git add a
git -c user.name=jail -c user.email=jail@example.org commit -qm first
git log --oneline | wc -l
git status --porcelain=v1 --branch
)sh";
  std::string out = run_cleanly("git", {"sh", "-c", script});
  EXPECT_NE(out.find("1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("## "), std::string::npos) << out;
}

JAIL_INSTANTIATE_FOR_CALLERS(SeccompTools);

}  // namespace
}  // namespace jail_test
