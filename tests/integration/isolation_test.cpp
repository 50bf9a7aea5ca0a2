// What the tool cannot see or reach: other processes, the network, the host's name; and the PID-1
// reaper inside reaps orphans.
#include <gtest/gtest.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <optional>

#include "run_jail.hpp"

namespace jail_test {
namespace {

class Isolation : public CallerTest {};

std::vector<long> numeric(const std::vector<std::string>& entries) {
  std::vector<long> pids;
  for (const std::string& e : entries) {
    if (!e.empty() && std::all_of(e.begin(), e.end(), ::isdigit)) pids.push_back(std::stol(e));
  }
  return pids;
}

TEST_P(Isolation, ProcShowsOnlyTheJailsProcesses) {
  RunResult r = run({"--", "ls", "-1", "/proc"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<long> pids = numeric(split_lines(r.out));
  EXPECT_NE(std::find(pids.begin(), pids.end(), 1), pids.end()) << describe(r);
  // The reaper and `ls` (perhaps one helper): never the host's dozens.
  EXPECT_GE(pids.size(), 2u) << describe(r);
  EXPECT_LE(pids.size(), 3u) << describe(r);
  EXPECT_TRUE(std::all_of(pids.begin(), pids.end(), [](long p) { return p < 10; })) << describe(r);
}

TEST_P(Isolation, TwoJailsDoNotSeeEachOther) {
  auto first = start({"--", "sh", "-c", "echo started; exec sleep 30"});
  ASSERT_TRUE(first->wait_for_stdout("started", 20s));
  RunResult r = run({"--", "ls", "-1", "/proc"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_LE(numeric(split_lines(r.out)).size(), 3u) << describe(r);
}

TEST_P(Isolation, PsShowsOnlyTheJailsProcesses) {
  RunResult r = run({"--", "ps", "-e", "-o", "pid=,comm="});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<std::string> lines = split_lines(r.out);
  EXPECT_GE(lines.size(), 2u) << describe(r);
  EXPECT_LE(lines.size(), 3u) << describe(r);
  for (const std::string& line : lines) {
    EXPECT_EQ(line.find("jail_integration"), std::string::npos) << describe(r);
  }
}

TEST_P(Isolation, OnlyLoopbackAndItIsUp) {
  RunResult r = run({"--", "cat", "/proc/net/dev"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<std::string> lines = split_lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << "two header lines and lo only\n" << describe(r);
  EXPECT_EQ(trim(lines[2]).rfind("lo:", 0), 0u) << describe(r);

  RunResult ip = run({"--", "/usr/sbin/ip", "-o", "link"});
  ASSERT_EQ(ip.exit_code, 0) << describe(ip);
  std::vector<std::string> links = split_lines(ip.out);
  ASSERT_EQ(links.size(), 1u) << describe(ip);
  EXPECT_NE(links[0].find(": lo:"), std::string::npos) << describe(ip);
  EXPECT_NE(links[0].find("UP"), std::string::npos) << "lo must be up\n" << describe(ip);
}

TEST_P(Isolation, LoopbackWorks) {
  // Something listening on 127.0.0.1 inside is reachable inside.
  RunResult r = run({"--", "python3", "-c",
                     "import socket\n"
                     "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
                     "c = socket.create_connection(s.getsockname(), timeout=5)\n"
                     "print('connected')\n"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "connected\n") << describe(r);
}

TEST_P(Isolation, NoRouteOut) {
  RunResult r = run({"--", "python3", "-c",
                     "import socket\n"
                     "try:\n"
                     "    socket.create_connection(('1.1.1.1', 53), timeout=3)\n"
                     "    print('reached')\n"
                     "except OSError as e:\n"
                     "    print('unreachable')\n"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "unreachable\n") << describe(r);
}

TEST_P(Isolation, HostAbstractSocketsUnreachable) {
  // Abstract unix sockets belong to the network namespace: a host listener is not reachable.
  int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  std::string name = "jail-itest-" + std::to_string(getpid());
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::copy(name.begin(), name.end(), addr.sun_path + 1);  // sun_path[0] == 0: abstract
  auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  std::string script =
      "import socket\n"
      "s = socket.socket(socket.AF_UNIX)\n"
      "try:\n"
      "    s.connect('\\0" +
      name +
      "')\n"
      "    print('reached')\n"
      "except OSError:\n"
      "    print('unreachable')\n";
  RunResult r = run({"--", "python3", "-c", script});
  RunResult shared = run({"--net", "host", "--", "python3", "-c", script});
  close(listener);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "unreachable\n") << describe(r);
  // Sharing the host's network shares its abstract sockets, but the tool's Landlock domain
  // scopes them (abstract_socket_test.cpp shows its own still work).
  EXPECT_EQ(shared.out, "unreachable\n") << describe(shared);
}

TEST_P(Isolation, NetHostSharesTheHostsInterfaces) {
  RunResult r = run({"--net", "host", "--", "cat", "/proc/net/dev"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::optional<std::string> host = read_file("/proc/net/dev");
  ASSERT_TRUE(host);
  EXPECT_EQ(split_lines(r.out).size(), split_lines(*host).size()) << describe(r);
  EXPECT_GT(split_lines(r.out).size(), 3u) << describe(r);
}

TEST_P(Isolation, HostnameIsJail) {
  RunResult r = run({"--", "sh", "-c", "uname -n; cat /proc/sys/kernel/hostname"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "jail\njail\n") << describe(r);
}

TEST_P(Isolation, HostnameFlag) {
  RunResult r = run({"--hostname", "box-42", "--", "uname", "-n"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "box-42\n") << describe(r);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  EXPECT_NE(std::string(host), "box-42") << "the host's name changed";
}

TEST_P(Isolation, OrphansAreReaped) {
  RunResult r = run(concat({probe_mount(), {"--", probe("orphan_reaping")}}));
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "zombies 0\n") << describe(r);
}

TEST_P(Isolation, ShellBackgroundOrphansLeaveNoZombie) {
  // sh forks a subshell that forks `true` and exits; the orphan's exit must be reaped by PID 1.
  // The shell waits until both orphans are gone from /proc (reaped), for at most 10 s, then lists
  // every zombie left.
  RunResult r = run({"--", "sh", "-c",
                     "orphans=$( (true & echo $!; true & echo $!; exit 0) ); n=0;"
                     " for p in $orphans; do"
                     " while [ -e /proc/$p ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done;"
                     " done;"
                     " grep -l '^State:.*Z' /proc/[0-9]*/status; exit 0"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "") << "zombies left\n" << describe(r);
}

TEST_P(Isolation, IpcNamespaceIsPrivate) {
  // A System V shared-memory segment of the host is not listed inside.
  int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
  ASSERT_GE(id, 0);
  RunResult r = run({"--", "cat", "/proc/sysvipc/shm"});
  shmctl(id, IPC_RMID, nullptr);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(split_lines(r.out).size(), 1u) << "only the header line\n" << describe(r);
}

JAIL_INSTANTIATE_FOR_CALLERS(Isolation);

}  // namespace
}  // namespace jail_test
