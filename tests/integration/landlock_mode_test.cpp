// The Landlock mode: where no user namespace can be made, jail still runs the tool, and says in
// which mode. Each test runs as an unprivileged caller: through the no_userns probe (a minimal
// filter that refuses user namespaces; the mode chosen automatically), under Docker's real
// default profile (docker_profile.hpp), and in the namespaces mode, so they stay comparable.
// Attacks, each checked on the host:
// a secret in $HOME and a credential store in the project, writes outside the binds, a signal to
// a process of the same user outside the jail, a TCP connect to 127.0.0.1 and a Unix socket of
// the user's, a call the policy kills, and processes left behind by a SIGKILLed jail.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "docker_profile.hpp"
#include "host_socket.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

// A host process of the unprivileged user's, outside every jail: what the tool must not reach.
pid_t start_users_process() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    // At nice 0 (root may lower it), whatever the tests run at: an attack that renices it to
    // 19 must show, also under `nice -n 19 ctest`.
    if (::setpriority(PRIO_PROCESS, 0, 0) != 0 ||
        ::setresgid(kNobodyGid, kNobodyGid, kNobodyGid) != 0 ||
        ::setresuid(kNobodyUid, kNobodyUid, kNobodyUid) != 0)
      ::_exit(126);
    ::execl("/bin/sleep", "sleep", "60", nullptr);
    ::_exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return pid;
}

// A socket of `type` bound to 127.0.0.1 on a free port (listening, for a stream), non-blocking;
// -1 on failure.
int loopback_socket(int type, int& port) {
  const int fd = ::socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      (type == SOCK_STREAM && ::listen(fd, 8) != 0) ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  port = ntohs(address.sin_port);
  return fd;
}

// The Landlock mode at this kernel's ABI (7), and as Ubuntu 24.04's (4) and Debian 12's (2)
// kernels give it (JAIL_LANDLOCK_ABI_MAX), where the filter keeps the tool's signals in; and
// inside a Docker container, under its default profile.
enum class Mode { landlock, landlock_abi4, landlock_abi2, docker, namespaces };

void kill_processes_with(const std::string& marker) {
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return;
  while (const dirent* entry = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::strtol(entry->d_name, nullptr, 10));
    if (pid <= 0) continue;
    std::string cmdline =
        read_file("/proc/" + std::string(entry->d_name) + "/cmdline").value_or("");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(marker) != std::string::npos) ::kill(pid, SIGKILL);
  }
  ::closedir(proc);
}

class LandlockMode : public ::testing::TestWithParam<Mode> {
 protected:
  void SetUp() override {
    if (GetParam() == Mode::docker) {
      if (const std::string missing = docker_profile_missing(); !missing.empty())
        GTEST_SKIP() << missing;
      // Not vacuous: the profile is in force, and refuses user namespaces as it does in Docker.
      ASSERT_EQ(docker_profile_not_in_force(), "");
    }
    for (const std::string& dir : {home_, project_, work_, outside_, tmp_}) {
      ASSERT_EQ(::mkdir(dir.c_str(), dir == home_ ? 0700 : 0755), 0) << dir;
      ASSERT_EQ(::chown(dir.c_str(), kNobodyUid, kNobodyGid), 0) << dir;
    }
    write_file(home_ + "/secret.txt", "HOME-SECRET\n", 0600);
    ASSERT_EQ(::mkdir((project_ + "/.aws").c_str(), 0700), 0);
    ASSERT_EQ(::chown((project_ + "/.aws").c_str(), kNobodyUid, kNobodyGid), 0);
    write_file(project_ + "/.aws/credentials", "AWS-SECRET\n", 0600);
    write_file(project_ + "/main.py", "print('main')\n");
  }

  [[nodiscard]] bool landlock() const { return GetParam() != Mode::namespaces; }

  RunOptions options() const {
    RunOptions options;
    options.caller = Caller::unprivileged;
    options.cwd = project_;
    options.extra_env = {"HOME=" + home_, "TMPDIR=" + tmp_};
    if (landlock()) options.wrapper = {std::string(JAIL_PROBE_DIR) + "/no_userns"};
    if (GetParam() == Mode::docker) options.wrapper = docker_profile_wrapper();
    if (GetParam() == Mode::landlock_abi4) options.extra_env.push_back("JAIL_LANDLOCK_ABI_MAX=4");
    if (GetParam() == Mode::landlock_abi2) options.extra_env.push_back("JAIL_LANDLOCK_ABI_MAX=2");
    return options;
  }

  std::vector<std::string> args(std::vector<std::string> flags, const std::string& script) const {
    flags.insert(flags.end(), {"--", "sh", "-c", script});
    return flags;
  }

  RunResult run(std::vector<std::string> flags, const std::string& script) const {
    return run_jail(args(std::move(flags), script), options());
  }

  TempDir base_;
  std::string home_ = base_ / "home";
  std::string project_ = base_ / "project";
  std::string work_ = base_ / "work";
  std::string outside_ = base_ / "outside";
  // jail's TMPDIR: the Landlock mode makes the tool's private one there, so that no other test's
  // count of /tmp sees it (nor a SIGKILLed jail's, which it can't remove).
  std::string tmp_ = base_ / "tmp";
};

TEST_P(LandlockMode, TheToolRunsAndTheStatusNamesTheMode) {
  const std::string status = base_ / "status.json";
  const std::string audit = base_ / "audit.jsonl";
  const RunResult r = run({"--status-file", status, "--audit-log", audit}, "echo ran; exit 7");
  EXPECT_EQ(r.exit_code, 7) << describe(r);
  EXPECT_NE(r.out.find("ran"), std::string::npos) << describe(r);
  const auto json = nlohmann::json::parse(read_file(status).value_or("null"), nullptr, false);
  ASSERT_TRUE(json.is_object()) << describe(r);
  EXPECT_EQ(json["isolation"], landlock() ? "landlock" : "namespaces") << json.dump(2);
  const auto line = nlohmann::json::parse(read_file(audit).value_or("null"), nullptr, false);
  ASSERT_TRUE(line.is_object()) << describe(r);
  EXPECT_EQ(line["isolation"], json["isolation"]) << line.dump(2);
}

TEST_P(LandlockMode, FilesOutsideTheBindsStayOutOfReach) {
  const RunResult r =
      run({"--bind", work_},
          "cat " + home_ +
              "/secret.txt; cat .aws/credentials; cat main.py; "
              "echo x > " +
              outside_ +
              "/planted; echo y > \"${TMPDIR:-/tmp}/t\" && "
              "echo tmp-ok; echo z > " +
              work_ +
              "/out && echo work-ok; "
              "echo w > main.py; python3 -c \"import os; os.truncate('main.py', 0)\"; true");
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out.find("HOME-SECRET"), std::string::npos) << describe(r);
  EXPECT_EQ(r.out.find("AWS-SECRET"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("main"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("tmp-ok"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("work-ok"), std::string::npos) << describe(r);
  EXPECT_FALSE(read_file(outside_ + "/planted").has_value()) << describe(r);
  EXPECT_EQ(read_file(work_ + "/out"), "z\n");
  EXPECT_EQ(read_file(project_ + "/main.py"), "print('main')\n") << "the project is read-only";
}

TEST_P(LandlockMode, ASignalToTheUsersOtherProcessesIsRefused) {
  const pid_t victim = start_users_process();
  ASSERT_GT(victim, 0);
  // Its own children it signals as ever; the user's other process not.
  const RunResult r = run({}, "sleep 100 & kill -TERM $!; wait $!; echo own=$?; kill -TERM " +
                                  std::to_string(victim) + "; echo kill=$?");
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("own=143"), std::string::npos) << describe(r);
  EXPECT_EQ(r.out.find("kill=0"), std::string::npos) << describe(r);
  int status = 0;
  EXPECT_EQ(::waitpid(victim, &status, WNOHANG), 0) << "the host process was signalled";
  ::kill(victim, SIGKILL);
  ::waitpid(victim, &status, 0);
}

TEST_P(LandlockMode, NetNoneReachesNeitherLoopbackNorTheUsersSockets) {
  int port = 0;
  const int listener = loopback_socket(SOCK_STREAM, port);
  ASSERT_GE(listener, 0);
  // A session bus's or tmux's socket: the user's own, in a directory only the user reaches.
  const std::string bus = outside_ + "/bus";
  HostServer server(bus, SOCK_STREAM);
  ASSERT_TRUE(server.bound());

  const std::string tool =
      "import socket\n"
      "for family, kind, where in ((socket.AF_INET, socket.SOCK_STREAM, ('127.0.0.1', " +
      std::to_string(port) + ")), (socket.AF_UNIX, socket.SOCK_STREAM, '" + bus +
      "')):\n"
      "    try:\n"
      "        s = socket.socket(family, kind); s.settimeout(2); s.connect(where)\n"
      "        print('connected', where)\n"
      "    except OSError as e:\n"
      "        print('refused', where, e.errno)\n"
      "try:\n"
      "    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', " +
      std::to_string(port) +
      "))\n"
      "    print('udp sent')\n"
      "except OSError as e:\n"
      "    print('udp refused', e.errno)\n";
  const RunResult r = run_jail({"--", "python3", "-c", tool}, options());
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out.find("connected"), std::string::npos) << describe(r);
  EXPECT_EQ(server.reached(), 0) << describe(r);
  const int accepted = ::accept(listener, nullptr, nullptr);
  EXPECT_LT(accepted, 0) << "a TCP connection reached the host's loopback";
  if (accepted >= 0) ::close(accepted);
  ::close(listener);
  // In the namespaces mode the datagram goes to the jail's own loopback, where no one listens.
  if (landlock()) {
    EXPECT_NE(r.out.find("udp refused"), std::string::npos) << describe(r);
  }
}

// The outside review's attacks, each checked on the host afterwards: a symlink planted next to a
// credential store, chmod and utime of the caller's files outside the binds, UDP through a
// socket() domain with a high bit set, a signal through a /proc/PID descriptor and through
// FIOSETOWN, the tool stopping its own init, another process's priority, and O_TRUNC on an open
// for reading.
TEST_P(LandlockMode, TheOutsideReviewsAttacksChangeNothing) {
  ASSERT_EQ(::symlink(home_.c_str(), (project_ + "/homelink").c_str()), 0);
  ASSERT_EQ(::lchown((project_ + "/homelink").c_str(), kNobodyUid, kNobodyGid), 0);
  int udp_port = 0;
  const int udp = loopback_socket(SOCK_DGRAM, udp_port);
  ASSERT_GE(udp, 0);
  const pid_t victim = start_users_process();
  ASSERT_GT(victim, 0);
  const std::string v = std::to_string(victim);
  const std::string tool =
      "import ctypes, fcntl, os, signal, socket, struct, time\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "def attempt(name, f):\n"
      "    try:\n"
      "        f(); print(name, 'done')\n"
      "    except OSError as e:\n"
      "        print(name, 'refused', e.errno)\n"
      "attempt('symlink', lambda: print(open('homelink/secret.txt').read()))\n"
      "attempt('chmod', lambda: os.chmod('" +
      home_ +
      "/secret.txt', 0o666))\n"
      "attempt('utime', lambda: os.utime('" +
      home_ +
      "/secret.txt', (0, 0)))\n"
      "def udp():\n"
      "    fd = libc.syscall(41, ctypes.c_long(socket.AF_INET | (1 << 32)), 2, 0)\n"
      "    if fd < 0: raise OSError(ctypes.get_errno(), 'socket')\n"
      "    socket.socket(fileno=fd).sendto(b'LEAK', ('127.0.0.1', " +
      std::to_string(udp_port) +
      "))\n"
      "attempt('udp', udp)\n"
      "def procfd():\n"
      "    fd = os.open('/proc/" +
      v +
      "', os.O_RDONLY | os.O_DIRECTORY)\n"
      "    if libc.syscall(424, fd, signal.SIGTERM, None, 0) != 0:\n"
      "        raise OSError(ctypes.get_errno(), 'pidfd_send_signal')\n"
      "attempt('procfd', procfd)\n"
      "def sigio():\n"
      "    a, b = socket.socketpair()\n"
      "    fcntl.ioctl(a, 0x8901, struct.pack('i', " +
      v +
      "))\n"
      "    fcntl.fcntl(a, 10, signal.SIGTERM)\n"
      "    fcntl.fcntl(a, fcntl.F_SETFL, os.O_ASYNC)\n"
      "    b.send(b'x'); time.sleep(0.1)\n"
      "attempt('sigio', sigio)\n"
      "attempt('nice', lambda: os.setpriority(os.PRIO_PROCESS, " +
      v +
      ", 19))\n"
      "attempt('init', lambda: os.kill(os.getppid(), signal.SIGSTOP))\n"
      "attempt('otrunc', lambda: os.open('main.py', os.O_RDONLY | os.O_TRUNC))\n"
      "print('end')\n";
  const RunResult r = run_jail({"--", "python3", "-c", tool}, options());
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("end"), std::string::npos) << "the run did not finish\n" << describe(r);
  EXPECT_EQ(r.out.find("HOME-SECRET"), std::string::npos) << describe(r);
  struct stat secret {};
  ASSERT_EQ(::stat((home_ + "/secret.txt").c_str(), &secret), 0);
  EXPECT_EQ(secret.st_mode & 07777, 0600u) << describe(r);
  EXPECT_NE(secret.st_mtim.tv_sec, 0) << describe(r);
  char datagram[16];
  EXPECT_LT(::recv(udp, datagram, sizeof datagram, 0), 0) << "a datagram left --net none";
  ::close(udp);
  int status = 0;
  EXPECT_EQ(::waitpid(victim, &status, WNOHANG), 0) << "the host process was signalled\n"
                                                    << describe(r);
  std::string stat_line = read_file("/proc/" + v + "/stat").value_or("");
  // Field 19 is the nice value: after the command in parentheses, the 17th.
  std::istringstream fields(stat_line.substr(stat_line.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 19 && fields >> field; ++i) {
  }
  EXPECT_EQ(field, "0") << "the host process's priority changed\n" << describe(r);
  ::kill(victim, SIGKILL);
  ::waitpid(victim, &status, 0);
  EXPECT_EQ(read_file(project_ + "/main.py"), "print('main')\n") << describe(r);
}

TEST_P(LandlockMode, ACallThePolicyKillsEndsTheRunWith159) {
  // The violating process and its sibling both go: none may run on after the verdict.
  const std::string tail = "violation-" + std::to_string(::getpid());
  const RunResult r = run_jail(
      {"--", "sh", "-c",
       "m=jail-landlock-; sh -c 'sleep 1000; :' \"${m}" + tail +
           "\" & exec python3 -c 'import ctypes, time; ctypes.CDLL(None).ptrace(0, 0, 0, 0); "
           "time.sleep(1000)' \"${m}" +
           tail + "\""},
      options());
  EXPECT_EQ(r.exit_code, 159) << describe(r);
  const std::string marker = "jail-landlock-" + tail;
  int left = 0;
  for (int i = 0; i < 100 && (left = processes_with(marker)) > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(left, 0) << "processes of the tool outlived the kill";
  if (left > 0) kill_processes_with(marker);
}

TEST_P(LandlockMode, NothingOfTheToolOutlivesASigkilledJail) {
  // Put together by the tool, so that only its orphans' command lines hold it (not jail's).
  const std::string tail = "orphan-" + std::to_string(::getpid());
  const std::string marker = "jail-landlock-" + tail;
  JailProcess jail(
      args({}, "m=jail-landlock-; setsid sh -c 'sleep 1000; :' \"${m}" + tail +
                   "\" & (sh -c 'sleep 1000; :' \"${m}" + tail + "\" &); echo READY; sleep 1000"),
      options());
  ASSERT_TRUE(jail.wait_for_stdout("READY", std::chrono::seconds(20)));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_EQ(processes_with(marker), 2) << "the tool's processes were not started";
  ::kill(jail.pid(), SIGKILL);
  (void)jail.wait(std::chrono::seconds(10));
  int left = 0;
  for (int i = 0; i < 100 && (left = processes_with(marker)) > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(left, 0) << "processes of the tool survived jail";
  if (left > 0) kill_processes_with(marker);  // this run's own, by the pids that hold its marker

  // The killed jail could not remove the tool's private TMPDIR; the next jail does, once that
  // jail is gone, and leaves a running one's alone.
  if (!landlock()) return;
  const std::string killed = "jail-tmp-" + std::to_string(jail.pid()) + "-";
  const auto count = [&](const std::string& prefix) {
    int found = 0;
    for (const auto& entry : std::filesystem::directory_iterator(tmp_))
      found += entry.path().filename().string().starts_with(prefix) ? 1 : 0;
    return found;
  };
  EXPECT_EQ(count(killed), 1) << "the killed jail's TMPDIR was not there to clean";
  const std::string live = tmp_ + "/jail-tmp-" + std::to_string(::getpid()) + "-live";
  ASSERT_EQ(::mkdir(live.c_str(), 0700), 0);
  ASSERT_EQ(::chown(live.c_str(), kNobodyUid, kNobodyGid), 0);
  const RunResult next = run({}, "true");
  EXPECT_EQ(next.exit_code, 0) << describe(next);
  EXPECT_EQ(count(killed), 0) << "the next jail left the killed one's TMPDIR";
  EXPECT_EQ(count("jail-tmp-" + std::to_string(::getpid()) + "-"), 1)
      << "a TMPDIR of a running process was removed";
}

// `jail doctor` says which mode this host gives the caller, and why.
TEST(LandlockDoctor, NamesTheModeAndWhy) {
  RunOptions options;
  options.caller = Caller::unprivileged;
  options.wrapper = {std::string(JAIL_PROBE_DIR) + "/no_userns"};
  const RunResult refused = run_jail({"doctor", "--format", "json"}, options);
  const auto json = nlohmann::json::parse(refused.out, nullptr, false);
  ASSERT_TRUE(json.is_object()) << describe(refused);
  const auto& facts = json["user_namespaces"];
  EXPECT_EQ(facts["isolation"], "landlock") << json.dump(2);
  EXPECT_NE(facts["caller_error"].get<std::string>().find("EPERM"), std::string::npos)
      << json.dump(2);
  const RunResult text = run_jail({"doctor"}, options);
  EXPECT_NE(text.out.find("runs: yes, in the Landlock mode"), std::string::npos) << describe(text);

  options.wrapper.clear();
  const RunResult here = run_jail({"doctor", "--format", "json"}, options);
  const auto native = nlohmann::json::parse(here.out, nullptr, false);
  ASSERT_TRUE(native.is_object()) << describe(here);
  EXPECT_EQ(native["user_namespaces"]["isolation"], "namespaces");
}

// Inside a container under Docker's default profile, too.
TEST(LandlockDoctor, NamesTheModeUnderDockersProfile) {
  if (const std::string missing = docker_profile_missing(); !missing.empty())
    GTEST_SKIP() << missing;
  ASSERT_EQ(docker_profile_not_in_force(), "");
  RunOptions options;
  options.caller = Caller::unprivileged;
  options.wrapper = docker_profile_wrapper();
  const RunResult r = run_jail({"doctor", "--format", "json"}, options);
  const auto json = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(json.is_object()) << describe(r);
  EXPECT_EQ(json["user_namespaces"]["isolation"], "landlock") << json.dump(2);
  EXPECT_NE(json["user_namespaces"]["caller_error"].get<std::string>().find("EPERM"),
            std::string::npos)
      << json.dump(2);
  const RunResult text = run_jail({"doctor"}, options);
  EXPECT_NE(text.out.find("runs: yes, in the Landlock mode"), std::string::npos) << describe(text);
  EXPECT_NE(text.out.find("already runs under a seccomp filter"), std::string::npos)
      << describe(text);
  EXPECT_NE(text.out.find("pidfd_getfd: EPERM"), std::string::npos) << describe(text);
  EXPECT_EQ(json["seccomp"]["pidfd_getfd"], false) << json.dump(2);
}

// What the mode cannot keep is refused with the reason, never run with the request dropped.
TEST_P(LandlockMode, WhatTheModeCannotKeepIsRefused) {
  if (!landlock()) GTEST_SKIP() << "the namespaces mode keeps all of these; nothing to refuse";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--dry-run"}, "cannot make a dry run"},
      {{"--tmpfs", "/scratch"}, "cannot mount a tmpfs at /scratch"},
      {{"--bind", work_ + ":/work"}, "cannot show " + work_ + " at /work"},
      {{"--bind", ".", "--protect", "main.py"}, "read-only inside the writable"},
      {{"--hostname", "other"}, "cannot set --hostname"},
      {{"--policy", "none"}, "without a seccomp filter"},
  };
  for (const auto& [flags, message] : cases) {
    const RunResult r = run(flags, "echo RAN");
    EXPECT_EQ(r.exit_code, 125) << describe(r);
    EXPECT_EQ(r.out.find("RAN"), std::string::npos) << describe(r);
    EXPECT_NE(r.err.find(message), std::string::npos) << describe(r);
  }
  RunOptions as_root;
  as_root.cwd = project_;
  const RunResult root = run_jail({"--isolation", "landlock", "--", "true"}, as_root);
  EXPECT_EQ(root.exit_code, 125) << describe(root);
  EXPECT_NE(root.err.find("it would be host root"), std::string::npos) << describe(root);
}

// Ubuntu's restriction: the user namespace is made, but it holds no capability, so the first
// mount inside fails. Played by no_userns --caps-less (every mount call EPERM), with
// JAIL_ASSUME_RESTRICTED_USERNS for the sysctl this host has no AppArmor to set.
TEST(LandlockUbuntu, ACapabilityLessUserNamespaceFallsBackToo) {
  TempDir dir;
  RunOptions options;
  options.caller = Caller::unprivileged;
  options.cwd = dir.path();
  options.wrapper = {std::string(JAIL_PROBE_DIR) + "/no_userns", "--caps-less"};
  options.extra_env = {"JAIL_ASSUME_RESTRICTED_USERNS=1", "TMPDIR=" + dir.path()};
  const std::string status = dir / "status.json";
  const RunResult r = run_jail({"--status-file", status, "--", "sh", "-c", "exit 4"}, options);
  EXPECT_EQ(r.exit_code, 4) << describe(r);
  const auto json = nlohmann::json::parse(read_file(status).value_or("null"), nullptr, false);
  ASSERT_TRUE(json.is_object()) << describe(r);
  EXPECT_EQ(json["isolation"], "landlock") << json.dump(2);

  // Asked for the namespaces, the failure says what lifts the restriction.
  const RunResult forced = run_jail({"--isolation", "namespaces", "--", "true"}, options);
  EXPECT_EQ(forced.exit_code, 125) << describe(forced);
  EXPECT_NE(forced.err.find("apparmor_parser -r /etc/apparmor.d/jail"), std::string::npos)
      << describe(forced);
}

// Below Landlock ABI 6 the filter is what keeps the tool's signals in: without one the mode
// refuses, naming the ABI it found. JAIL_LANDLOCK_ABI_MAX plays the older kernels here.
TEST(LandlockAbi, BelowSixTheFilterIsRequired) {
  TempDir dir;
  RunOptions options;
  options.cwd = dir.path();
  options.caller = Caller::unprivileged;
  options.wrapper = {std::string(JAIL_PROBE_DIR) + "/no_userns"};
  options.extra_env = {"JAIL_LANDLOCK_ABI_MAX=4", "TMPDIR=" + dir.path()};
  const RunResult bare = run_jail({"--net", "host", "--policy", "none", "--", "true"}, options);
  EXPECT_EQ(bare.exit_code, 125) << describe(bare);
  EXPECT_NE(bare.err.find("Landlock ABI 4"), std::string::npos) << describe(bare);
  options.extra_env = {"JAIL_LANDLOCK_ABI_MAX=6", "TMPDIR=" + dir.path()};
  const RunResult six = run_jail({"--net", "host", "--policy", "none", "--", "true"}, options);
  EXPECT_EQ(six.exit_code, 0) << describe(six);
}

std::string mode_name(const ::testing::TestParamInfo<Mode>& mode) {
  switch (mode.param) {
    case Mode::landlock:
      return "landlock";
    case Mode::landlock_abi4:
      return "landlock_abi4";
    case Mode::landlock_abi2:
      return "landlock_abi2";
    case Mode::docker:
      return "docker";
    case Mode::namespaces:
      break;
  }
  return "namespaces";
}

INSTANTIATE_TEST_SUITE_P(Modes, LandlockMode,
                         ::testing::Values(Mode::landlock, Mode::landlock_abi4, Mode::landlock_abi2,
                                           Mode::docker, Mode::namespaces),
                         mode_name);

}  // namespace
}  // namespace jail_test
