// Under --runtime runsc the caller's binds are opened by jail's keeper the same way: a planted
// link in a bind source is refused, and a bound home's credential stores are masked.
#include <gtest/gtest.h>

#include <dirent.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "host_socket.hpp"
#include "run_jail.hpp"
#include "runsc_fixture.hpp"

namespace jail_test {
namespace {

TEST_F(Runsc, APlantedLinkAndCredentialStoresStayOutOfTheSandbox) {
  TempDir work;
  TempDir elsewhere;
  write_file(elsewhere / "secret", "not for the tool\n");
  std::filesystem::create_directory_symlink(elsewhere.path(), work / "data");
  const RunResult link =
      runsc({"--no-cwd", "--ro-bind", work / "data" + ":/data", "--", "cat", "/data/secret"});
  EXPECT_EQ(link.exit_code, 125) << describe(link);
  EXPECT_EQ(link.out.find("not for the tool"), std::string::npos) << describe(link);
  EXPECT_NE(link.err.find("is a symbolic link to " + elsewhere.path()), std::string::npos)
      << describe(link);

  TempDir home;
  std::filesystem::create_directories(home / ".ssh");
  write_file(home / ".ssh/id_ed25519", "PRIVATE KEY\n", 0600);
  write_file(home / ".netrc", "machine example.org password hunter2\n", 0600);
  write_file(home / "notes", "plain\n");
  const RunResult masked =
      runsc({"--no-cwd", "--bind", home.path() + ":/home/u", "--", "sh", "-c",
             "cat /home/u/.ssh/id_ed25519 /home/u/.netrc /home/u/notes 2>/dev/null; true"});
  EXPECT_EQ(masked.exit_code, 0) << describe(masked);
  EXPECT_EQ(masked.out.find("PRIVATE KEY"), std::string::npos) << describe(masked);
  EXPECT_EQ(masked.out.find("hunter2"), std::string::npos) << describe(masked);
  EXPECT_NE(masked.out.find("plain"), std::string::npos) << describe(masked);
}

// gVisor's gofer reaches no host socket through a bind: a server in the bound directory sees
// no connection, and the baseline makes no datagram Unix socket there either.
TEST_F(Runsc, AHostSocketInABindSeesNoConnection) {
  TempDir work;
  HostServer stream(work / "daemon.sock", SOCK_STREAM);
  ASSERT_TRUE(stream.bound());
  const RunResult r = runsc(
      {"--no-cwd", "--ro-bind", work.path() + ":/w", "--", "python3", "-c",
       "import socket\n"
       "for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):\n"
       "    try:\n"
       "        socket.socket(socket.AF_UNIX, kind).connect('/w/daemon.sock'); print(kind, 'ok')\n"
       "    except OSError as e: print(kind, 'refused', e.errno)\n"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out.find(" ok"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("2 refused 13"), std::string::npos) << describe(r);  // SOCK_DGRAM
  EXPECT_EQ(stream.reached(), 0) << describe(r);
}

pid_t parent_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string state;
  pid_t parent = 0;
  fields >> state >> parent;
  return parent;
}

// Every process below `root` (by parent links, read now).
std::vector<pid_t> descendants_of(pid_t root) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  while (const dirent* entry = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0) continue;
    for (pid_t up = parent_of(pid); up > 1; up = parent_of(up)) {
      if (up == root) {
        found.push_back(pid);
        break;
      }
    }
  }
  ::closedir(proc);
  return found;
}

// Under runsc the tool's user namespace is gVisor's own; on the host, every process the run
// starts maps no host 0 into a user namespace it entered: runsc's sandbox runs as host nobody.
TEST_F(Runsc, TheSandboxOnTheHostMapsNoHostRoot) {
  RunOptions options;
  JailProcess jail({"--runtime", "runsc", "--no-cwd", "--", "sh", "-c", "echo READY; sleep 20"},
                   options);
  ASSERT_TRUE(jail.wait_for_stdout("READY", std::chrono::seconds(30)));
  int sandboxes = 0;
  for (const pid_t pid : descendants_of(jail.pid())) {
    std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
    std::string name;
    std::getline(cmdline, name, '\0');
    std::ifstream map_file("/proc/" + std::to_string(pid) + "/uid_map");
    std::string map((std::istreambuf_iterator<char>(map_file)), std::istreambuf_iterator<char>());
    if (name.find("runsc-sandbox") == std::string::npos) continue;
    ++sandboxes;
    std::istringstream lines(map);
    long inside = 0, outside = 0, count = 0;
    while (lines >> inside >> outside >> count) {
      EXPECT_FALSE(outside == 0) << "the sandbox maps host 0:\n" << map;
    }
  }
  ::kill(jail.pid(), SIGTERM);
  const RunResult r = jail.wait(std::chrono::seconds(30));
  EXPECT_EQ(sandboxes, 1) << describe(r);
}

}  // namespace
}  // namespace jail_test
