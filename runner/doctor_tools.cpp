// Programs and devices outside the kernel's core: gVisor's runsc (the second back end), bwrap and
// nsjail (benchmark baselines) and /dev/kvm (runsc's fastest platform, qemu acceleration).
#include <fcntl.h>
#include <linux/kvm.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "doctor.hpp"

extern char** environ;

namespace jail::doctor {
namespace {

// What execvp would search when PATH is unset (glibc's default, plus the sbin directories root
// usually has).
constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// A `--version` that takes longer than this is hung, not slow.
constexpr int kVersionTimeoutMs = 5000;
// A one-command gVisor run (~0.3 s here) that takes longer than this is hung.
constexpr int kProbeRunTimeoutMs = 30000;
// How long a program past its time has to stop after SIGTERM before it is killed: jail's own
// clean-up of a runsc run takes well under a second.
constexpr int kStopGraceMs = 5000;

// KVM_GET_API_VERSION has returned 12 since Linux 2.6.22; anything else is not a usable KVM.
constexpr int kKvmApiVersion = 12;

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr && *path != '\0' ? path : kDefaultPath;
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end == start ? "." : dirs.substr(start, end - start);
    const std::string candidate = dir + "/" + name;
    struct stat info {};
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return "";
}

// Whether the process behind `pidfd` ends within `limit` (a pidfd polls readable when it has);
// it is left for the caller to reap. Without a pidfd (a kernel before 5.3) nothing can be
// waited for with a limit: taken as ended, and the caller's waitpid waits as long as it takes.
bool ends_within(int pidfd, std::chrono::milliseconds limit) {
  if (pidfd < 0) return true;
  pollfd ended{pidfd, POLLIN, 0};
  int ready = 0;
  do {
    ready = poll(&ended, 1, static_cast<int>(std::max<std::int64_t>(limit.count(), 0)));
  } while (ready < 0 && errno == EINTR);
  return ready > 0;
}

// Asks the child `pid` to stop (SIGTERM) and kills it when it has not within kStopGraceMs.
void stop(pid_t pid, int pidfd) {
  kill(pid, SIGTERM);
  if (!ends_within(pidfd, std::chrono::milliseconds(kStopGraceMs))) kill(pid, SIGKILL);
}

// What a program run by run_captured printed, and how it ended.
struct Captured {
  std::string text;
  int status = -1;  // a wait status; -1 when it could not be started, or was killed for its time
  bool timed_out = false;
};

// Where a program run by run_captured writes its stderr.
enum class Stderr { discarded, captured };
// How much of its output run_captured waits for.
enum class ReadUntil { end, first_line };

// Runs `argv` (argv[0] a path) with stdin from /dev/null and its stdout — its stderr too when
// captured, else /dev/null — into a pipe read until it closes (or until the first line is there)
// or `timeout` passes; the program must have ended by then too. posix_spawn keeps doctor out of
// post-fork code for this. A hung program
// is asked to stop with SIGTERM first — jail itself then removes its runsc sandbox, bundle and
// state directory, which a SIGKILL would leave behind — and killed if it has not within
// kStopGraceMs; it is always reaped, so nothing is left running.
Captured run_captured(std::vector<std::string> argv, Stderr stderr_to, ReadUntil until,
                      std::chrono::milliseconds timeout) {
  Captured captured;
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return captured;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  if (stderr_to == Stderr::captured) {
    posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  } else {
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  }
  std::vector<char*> pointers;
  for (std::string& word : argv) pointers.push_back(word.data());
  pointers.push_back(nullptr);
  pid_t pid = -1;
  const int spawned =
      posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, pointers.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (spawned != 0) {
    close(out[0]);
    return captured;
  }
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                 std::chrono::steady_clock::now());
  };
  bool timed_out = false;
  while (until == ReadUntil::end || captured.text.find('\n') == std::string::npos) {
    if (left().count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd ready{out[0], POLLIN, 0};
    if (poll(&ready, 1, static_cast<int>(left().count())) <= 0) continue;
    char buffer[512];
    const ssize_t n = read(out[0], buffer, sizeof buffer);
    if (n <= 0) break;
    captured.text.append(buffer, static_cast<size_t>(n));
  }
  close(out[0]);
  // Its output ended (or its first line came) in time; its end must too: a program that printed
  // a line and then hung would hold doctor in waitpid.
  if (!timed_out && !ends_within(pidfd, left())) timed_out = true;
  if (timed_out) stop(pid, pidfd);
  if (pidfd >= 0) close(pidfd);
  int status = -1;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // Not waited for, or killed for its time: no status, so nothing reads as having worked.
  if (!timed_out) captured.status = status;
  captured.timed_out = timed_out;
  return captured;
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

// The first line `program --version` prints, or "" when it prints nothing in time.
std::string version_line(const std::string& program) {
  return first_line(run_captured({program, "--version"}, Stderr::discarded, ReadUntil::first_line,
                                 std::chrono::milliseconds(kVersionTimeoutMs))
                        .text);
}

// Some gVisor releases (Debian 12's runsc 20221219 among them) refuse AT_NO_AUTOMOUNT in statx
// and fstatat (EINVAL), and coreutils 9 passes it in every stat it makes: `ls -l`, `stat`,
// `cp -a`, `du` then fail on every file under --runtime runsc while Python, shells and most
// tools work. Only a run shows it (the version line says nothing of it): `stat /` under this
// jail and this runsc. "" when it works, else the first line it printed.
std::string runsc_stat_failure() {
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) return "cannot find jail's own binary (/proc/self/exe)";
  self[length] = '\0';
  const Captured run =
      run_captured({self, "--runtime", "runsc", "--no-cwd", "-q", "--", "stat", "-c", "%s", "/"},
                   Stderr::captured, ReadUntil::end, std::chrono::milliseconds(kProbeRunTimeoutMs));
  if (run.status == 0) return "";
  if (run.timed_out)
    return "it did not finish within " + std::to_string(kProbeRunTimeoutMs / 1000) + " s";
  const std::string said = first_line(run.text);
  return said.empty() ? std::string("it printed nothing") : said;
}

nlohmann::ordered_json tool_facts(const std::string& name, bool want_version) {
  nlohmann::ordered_json facts;
  const std::string path = find_on_path(name);
  facts["present"] = !path.empty();
  facts["path"] = path.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(path);
  if (want_version && !path.empty()) facts["version"] = version_line(path);
  return facts;
}

}  // namespace

Check check_runsc() {
  Check check;
  check.name = "runsc";
  check.need = Need::optional;  // the native back end gives full isolation on its own
  check.facts = tool_facts("runsc", true);
  if (!check.facts["present"].get<bool>()) {
    check.status = Status::missing;
    check.finding = "not on PATH";
    check.meaning =
        "only the native back end; install gVisor's runsc for the user-space-kernel one";
    return check;
  }
  const std::string version = check.facts["version"].get<std::string>();
  check.finding = check.facts["path"].get<std::string>() + ": " +
                  (version.empty() ? std::string("`--version` printed nothing") : version);
  check.status = version.empty() ? Status::limited : Status::ok;
  check.meaning = version.empty()
                      ? "runsc is there but does not answer; the gVisor back end may fail"
                      : "the gVisor back end is available";
  // jail --runtime runsc refuses callers other than root (runsc sets up its own namespaces and
  // cgroups): for them it is there but not usable.
  if (check.status == Status::ok && ::geteuid() != 0) {
    check.status = Status::limited;
    check.meaning =
        "installed, but --runtime runsc needs root; this caller can use only the "
        "native back end";
  }
  if (check.status == Status::ok) {
    const std::string failure = runsc_stat_failure();
    check.facts["stat_works"] = failure.empty();
    if (!failure.empty()) {
      check.status = Status::limited;
      check.finding += "; `stat /` under it fails: " + failure;
      check.meaning =
          failure.find("Invalid argument") != std::string::npos
              ? "the gVisor back end runs, but this gVisor refuses the stat calls coreutils makes "
                "(statx with AT_NO_AUTOMOUNT: EINVAL): ls -l, stat, cp -a and du fail on every "
                "file under --runtime runsc, while Python, shells and most tools work; a newer "
                "runsc may accept them (doctor tries again each time)"
              : "runsc is installed but could not run `stat /`; the gVisor back end may fail";
    }
  }
  return check;
}

Check check_benchmark_tools() {
  Check check;
  check.name = "benchmark_tools";
  check.need = Need::optional;  // only bench/ compares against them
  const nlohmann::ordered_json bwrap = tool_facts("bwrap", true);
  const nlohmann::ordered_json nsjail = tool_facts("nsjail", false);
  check.facts["bwrap"] = bwrap;
  check.facts["nsjail"] = nsjail;
  std::vector<std::string> present;
  std::vector<std::string> absent;
  (bwrap["present"].get<bool>() ? present : absent).push_back("bwrap");
  (nsjail["present"].get<bool>() ? present : absent).push_back("nsjail");
  std::string finding;
  if (bwrap["present"].get<bool>()) {
    const std::string version = bwrap["version"].get<std::string>();
    finding = "bwrap" + (version.empty() ? std::string() : " (" + version + ")");
  }
  if (nsjail["present"].get<bool>()) finding += std::string(finding.empty() ? "" : ", ") + "nsjail";
  if (!absent.empty()) {
    finding += std::string(finding.empty() ? "" : "; ") + "not on PATH: " + join(absent, " ");
  }
  check.finding = finding;
  check.status = absent.empty() ? Status::ok : present.empty() ? Status::missing : Status::limited;
  check.meaning = absent.empty() ? "bench/ can compare jail with both"
                                 : "bench/ skips the " + join(absent, " and ") +
                                       " baseline; jail itself is unaffected";
  return check;
}

Check check_kvm() {
  Check check;
  check.name = "kvm";
  check.need = Need::optional;
  struct stat info {};
  const bool present = stat("/dev/kvm", &info) == 0 && S_ISCHR(info.st_mode);
  int api = -1;
  int error = 0;
  if (present) {
    // Opening /dev/kvm and asking its API version creates no VM.
    const int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
    if (fd >= 0) {
      api = ioctl(fd, KVM_GET_API_VERSION, 0);
      close(fd);
    } else {
      error = errno;
    }
  }
  const bool usable = api == kKvmApiVersion;
  check.facts["present"] = present;
  check.facts["usable"] = usable;
  check.facts["api_version"] =
      api >= 0 ? nlohmann::ordered_json(api) : nlohmann::ordered_json(nullptr);
  if (usable) {
    check.status = Status::ok;
    check.finding = "/dev/kvm usable (API " + std::to_string(api) + ")";
    // Opening it proves no VM can run (a nested guest may still fail): runsc's KVM platform is
    // worth trying with --runsc-platform kvm, not promised.
    check.meaning =
        "runsc's KVM platform may work (--runsc-platform kvm; jail uses ptrace by default); the "
        "qemu VM tests can use acceleration";
  } else {
    check.status = Status::missing;
    check.finding = !present     ? std::string("no /dev/kvm")
                    : error != 0 ? "/dev/kvm cannot be opened: " + errno_name(error)
                                 : "/dev/kvm answers API " + std::to_string(api);
    check.meaning =
        "runsc runs on its ptrace platform (jail's default); the qemu VM tests run "
        "in software emulation";
  }
  return check;
}

}  // namespace jail::doctor
