// `jail doctor` run for real: its report must agree with what this test finds on the host itself,
// its exit codes must follow the contract, and it must leave nothing behind.
#include <fcntl.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

constexpr uid_t kNobody = 65534;
constexpr int kExecFailed = 127;

struct DoctorRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string read_all(int fd) {
  std::string text;
  lseek(fd, 0, SEEK_SET);
  char buffer[4096];
  ssize_t n = 0;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
  return text;
}

// Runs the jail binary with `args`, optionally as another uid; stdout and stderr go to memfds so
// no temp files are left behind and neither pipe can fill up.
DoctorRun run_binary(const std::vector<std::string>& args,
                     std::optional<uid_t> as_uid = std::nullopt) {
  const int out = memfd_create("doctor-out", MFD_CLOEXEC);
  const int err = memfd_create("doctor-err", MFD_CLOEXEC);
  std::vector<std::string> storage = {JAIL_BINARY};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out, 1);
    dup2(err, 2);
    if (as_uid && (setgroups(0, nullptr) != 0 || setresgid(*as_uid, *as_uid, *as_uid) != 0 ||
                   setresuid(*as_uid, *as_uid, *as_uid) != 0)) {
      _exit(kExecFailed);
    }
    execv(argv[0], argv.data());
    _exit(kExecFailed);
  }
  DoctorRun run;
  int status = 0;
  waitpid(pid, &status, 0);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.out = read_all(out);
  run.err = read_all(err);
  close(out);
  close(err);
  return run;
}

nlohmann::json doctor_json() {
  const DoctorRun run = run_binary({"doctor", "--format", "json"});
  EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.err;
  return nlohmann::json::parse(run.out);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The layout, computed here independently of jail: v1 hierarchies count only when they carry a
// controller the kernel lists in /proc/cgroups (name=systemd alone limits nothing).
std::string layout_from_mountinfo() {
  std::set<std::string> known;
  std::istringstream cgroups(read_file("/proc/cgroups"));
  std::string line;
  while (std::getline(cgroups, line)) {
    if (!line.empty() && line[0] != '#') known.insert(line.substr(0, line.find_first_of(" \t")));
  }
  bool v1_controllers = false;
  bool v2 = false;
  std::istringstream mountinfo(read_file("/proc/self/mountinfo"));
  while (std::getline(mountinfo, line)) {
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream tail(line.substr(dash + 3));
    std::string fstype, source, options;
    tail >> fstype >> source >> options;
    if (fstype == "cgroup2") v2 = true;
    if (fstype != "cgroup") continue;
    std::istringstream opts(options);
    std::string option;
    while (std::getline(opts, option, ',')) v1_controllers |= known.count(option) != 0;
  }
  if (v1_controllers) return v2 ? "hybrid" : "v1";
  return v2 ? "v2" : "none";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

TEST(Doctor, CgroupLayoutMatchesMountinfo) {
  const nlohmann::json report = doctor_json();
  EXPECT_EQ(report["cgroups"]["layout"], layout_from_mountinfo());
}

TEST(Doctor, ReportsUserNamespaces) {
  const nlohmann::json report = doctor_json();
  EXPECT_EQ(report["user_namespaces"]["available"], true);
  for (const char* kind : {"pid", "net", "mount", "ipc", "uts", "cgroup"}) {
    EXPECT_EQ(report["namespaces"][kind]["caller"], true) << kind;
  }
}

TEST(Doctor, ReportsSeccompUserNotification) {
  const nlohmann::json report = doctor_json();
  EXPECT_EQ(report["seccomp"]["user_notification"], true);
  EXPECT_EQ(report["seccomp"]["actions"]["kill_process"], true);
}

TEST(Doctor, ExitCodeFollowsVerdict) {
  const DoctorRun text = run_binary({"doctor"});
  const DoctorRun json = run_binary({"doctor", "--format", "json"});
  const nlohmann::json report = nlohmann::json::parse(json.out);
  EXPECT_EQ(json.exit_code, report["verdict"]["exit_code"]);
  EXPECT_EQ(text.exit_code, json.exit_code);
  // Root on this host has everything jail needs; a non-root caller may lack cgroup delegation.
  if (geteuid() == 0) {
    EXPECT_EQ(json.exit_code, 0) << report["verdict"]["summary"];
  }
}

TEST(Doctor, BadOptionsExitTwoWithAMessage) {
  const DoctorRun bad_format = run_binary({"doctor", "--format", "yaml"});
  EXPECT_EQ(bad_format.exit_code, 2);
  EXPECT_NE(bad_format.err.find("--format"), std::string::npos) << bad_format.err;
  EXPECT_TRUE(bad_format.out.empty()) << bad_format.out;
  const DoctorRun unknown = run_binary({"doctor", "--no-such-option"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--no-such-option"), std::string::npos) << unknown.err;
}

TEST(Doctor, TextHasOneLinePerCheckAndAVerdict) {
  const nlohmann::json report = doctor_json();
  const DoctorRun text = run_binary({"doctor"});
  const std::vector<std::string> lines = lines_of(text.out);
  size_t checks = 0;
  for (const auto& [name, check] : report.items()) {
    if (!check.is_object() || !check.contains("status") || name == "verdict") continue;
    ++checks;
    const std::string status = check["status"];
    const auto line = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) {
      std::istringstream words(l);
      std::string first, second;
      words >> first >> second;
      return second == name;
    });
    ASSERT_NE(line, lines.end()) << "no line for " << name << " in:\n" << text.out;
    EXPECT_EQ(line->rfind(status + " ", 0), 0u) << *line;
    EXPECT_NE(line->find(" — "), std::string::npos) << "no meaning on: " << *line;
  }
  EXPECT_GE(checks, 10u);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back().rfind("verdict: ", 0), 0u) << lines.back();
}

// An ordinary user without a delegated cgroup can run tools, just not limit them: the verdict
// says so, where it said jail "cannot run".
TEST(Doctor, AnOrdinaryUserIsToldWhatWorks) {
  if (geteuid() != 0) GTEST_FAIL() << "needs root to run doctor as uid 65534 (CI is root)";
  const DoctorRun run = run_binary({"doctor"}, kNobody);
  const std::vector<std::string> lines = lines_of(run.out);
  ASSERT_FALSE(lines.empty()) << run.err;
  const std::string& verdict = lines.back();
  EXPECT_EQ(verdict.rfind("verdict: runs: yes", 0), 0U) << verdict;
  const nlohmann::json report =
      nlohmann::json::parse(run_binary({"doctor", "--format", "json"}, kNobody).out);
  if (report["cgroups"]["status"] == "missing") {
    EXPECT_NE(verdict.find("limits (--memory, --pids, --cpus): no — they need a cgroup delegated"),
              std::string::npos)
        << verdict;
  }
  EXPECT_EQ(verdict.find("cannot run"), std::string::npos) << verdict;
  // And a plain run works for that user, as the verdict says.
  const DoctorRun plain = run_binary({"--no-cwd", "--", "true"}, kNobody);
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
}

// Root learns the non-root answer by probing as uid 65534; a real uid-65534 run must agree.
TEST(Doctor, UnprivilegedAnswerMatchesAnUnprivilegedRun) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run doctor as uid 65534";
  const nlohmann::json as_root = doctor_json();
  const DoctorRun run = run_binary({"doctor", "--format", "json"}, kNobody);
  if (run.exit_code == kExecFailed) GTEST_SKIP() << "uid 65534 cannot execute " << JAIL_BINARY;
  const nlohmann::json as_nobody = nlohmann::json::parse(run.out);
  EXPECT_EQ(as_nobody["uid"], kNobody);
  EXPECT_EQ(as_root["user_namespaces"]["unprivileged"], as_nobody["user_namespaces"]["caller"]);
  for (const char* kind : {"pid", "net", "mount", "ipc", "uts", "cgroup"}) {
    EXPECT_EQ(as_root["namespaces"][kind]["unprivileged"], as_nobody["namespaces"][kind]["caller"])
        << kind;
  }
}

// Doctor's probes fork children that make namespaces and mounts; none may outlive it. As a child
// subreaper this test inherits any orphan, so an empty child list after the run proves it.
TEST(Doctor, LeavesNothingBehind) {
  const std::string mounts_before = read_file("/proc/self/mountinfo");
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
  const DoctorRun run = run_binary({"doctor"});
  const std::string children =
      read_file("/proc/self/task/" + std::to_string(gettid()) + "/children");
  int status = 0;
  const pid_t orphan = waitpid(-1, &status, WNOHANG);
  const int wait_error = errno;
  prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
  EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.err;
  EXPECT_TRUE(children.empty()) << "left running: " << children;
  EXPECT_EQ(orphan, -1) << "an orphaned probe was reaped here: pid " << orphan;
  EXPECT_EQ(wait_error, ECHILD);
  EXPECT_EQ(read_file("/proc/self/mountinfo"), mounts_before);
}

// A tool whose `--version` hangs is stopped with SIGTERM before it is killed: jail's own runsc
// probe, stopped that way, removes its sandbox and directories, which a SIGKILL would leave. A
// stand-in `bwrap` first on PATH that prints its version line, then hangs (doctor, which reads
// only the first line, then waited for its end with no limit) and records the signal shows it.
TEST(Doctor, AHungToolIsAskedToStopBeforeItIsKilled) {
  char pattern[] = "/tmp/jail-test-doctor-hung-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  const std::string marker = dir + "/stopped";
  {
    std::ofstream script(dir + "/bwrap");
    script << "#!/bin/sh\ntrap 'echo TERM > " << marker << "; exit 0' TERM\n"
           << "echo 'bubblewrap 0.0-stand-in'\n"
           << "while :; do sleep 0.1; done\n";
  }
  ASSERT_EQ(chmod((dir + "/bwrap").c_str(), 0755), 0);
  const char* old_path = getenv("PATH");
  const std::string saved = old_path != nullptr ? old_path : "";
  setenv("PATH", (dir + ":" + saved).c_str(), 1);
  const DoctorRun run = run_binary({"doctor", "--format", "json"});
  setenv("PATH", saved.c_str(), 1);
  const std::string stopped = read_file(marker);
  unlink(marker.c_str());
  unlink((dir + "/bwrap").c_str());
  rmdir(dir.c_str());
  EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.err;
  EXPECT_EQ(stopped, "TERM\n") << "the hung tool was killed without being asked to stop";
  const nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.out;
  EXPECT_EQ(report["benchmark_tools"]["bwrap"]["path"], dir + "/bwrap") << run.out;
  EXPECT_EQ(report["benchmark_tools"]["bwrap"]["version"], "bubblewrap 0.0-stand-in") << run.out;
}

// --runtime runsc refuses callers other than root, so for them doctor does not call the gVisor
// back end available, even with runsc installed. For root it is ok where a gVisor run of
// coreutils' `stat` works, and limited, saying what fails, where that gVisor refuses its stat
// calls (Debian 12's runsc 20221219 does: EINVAL for AT_NO_AUTOMOUNT).
TEST(Doctor, RunscIsLimitedForACallerOtherThanRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run doctor as uid 65534";
  const nlohmann::json as_root = doctor_json();
  if (!as_root["runsc"]["present"].get<bool>()) {
    GTEST_FAIL() << "runsc is not installed; scripts/install-deps.sh installs the Debian package";
  }
  const DoctorRun stat_run =
      run_binary({"--runtime", "runsc", "--no-cwd", "-q", "--", "stat", "-c", "%s", "/"});
  const bool stat_works = stat_run.exit_code == 0;
  EXPECT_EQ(as_root["runsc"]["stat_works"], stat_works) << stat_run.err;
  EXPECT_EQ(as_root["runsc"]["status"], stat_works ? "ok" : "limited") << as_root["runsc"].dump();
  if (stat_run.err.find("Invalid argument") != std::string::npos) {
    EXPECT_NE(as_root["runsc"]["meaning"].get<std::string>().find("ls -l"), std::string::npos)
        << as_root["runsc"].dump();
  }
  const DoctorRun run = run_binary({"doctor", "--format", "json"}, kNobody);
  if (run.exit_code == kExecFailed) GTEST_SKIP() << "uid 65534 cannot execute " << JAIL_BINARY;
  const nlohmann::json as_nobody = nlohmann::json::parse(run.out);
  EXPECT_EQ(as_nobody["runsc"]["status"], "limited") << as_nobody["runsc"].dump();
  EXPECT_NE(as_nobody["runsc"]["meaning"].get<std::string>().find("needs root"), std::string::npos);
}

}  // namespace
