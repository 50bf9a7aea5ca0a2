// Under --runtime runsc the host-minimal root's read-only binds are made by runsc's own process,
// in the bundle's rootfs and in a mount namespace of its own (oci/host_side_binds.hpp), so that
// gVisor serves them as part of its root instead of setting each up as a mount. The tool sees
// the same files; writable binds stay gVisor's mounts; the host's mount table never holds any.
#include <gtest/gtest.h>

#include <sched.h>
#include <sys/syscall.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "../support/shell_quote.hpp"
#include "run_jail.hpp"
#include "runsc_fixture.hpp"

namespace jail_test {
namespace {

// The host's mount table lines that mention `word`.
std::string host_mounts_with(const std::string& word) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  std::string found;
  while (std::getline(in, line)) {
    if (line.find(word) != std::string::npos) found += line + "\n";
  }
  return found;
}

// The mount points the tool sees, one per line, then what it read and wrote through them.
constexpr const char* kMountView = R"(import os, ssl
points = sorted(line.split()[4] for line in open('/proc/self/mountinfo'))
print('mounts', ' '.join(points))
print('certs', ssl.create_default_context().cert_store_stats()['x509_ca'] > 0)
print('awk', os.path.exists('/etc/alternatives/awk'))
print('ro', open('/data-ro/note').read().strip())
try:
    open('/usr/jail-probe', 'w')
    print('usr written')
except OSError as error:
    print('usr refused', error.errno in (13, 30))
open('/data-rw/from-the-tool', 'w').write('written\n')
)";

TEST_F(Runsc, TheRootsReadOnlyBindsAreRunscsRootAndWritableOnesItsMounts) {
  TempDir data;
  std::filesystem::create_directories(data / "ro");
  std::filesystem::create_directories(data / "rw");
  // Writable by the tool's identity (the caller's uid, or 1000 for root's runs).
  std::filesystem::permissions(data / "rw", std::filesystem::perms::all);
  std::ofstream(data / "ro/note") << "the caller's note\n";
  std::ofstream(data / "probe.py") << kMountView;
  RunResult r = runsc({"--ro-bind", (data / "ro") + ":/data-ro", "--bind",
                       (data / "rw") + ":/data-rw", "--ro-bind", (data / "probe.py") + ":/probe.py",
                       "--no-cwd", "--", "python3", "/probe.py"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::istringstream lines(r.out);
  std::string mounts;
  std::getline(lines, mounts);
  // gVisor's own mounts: its root, /dev, /proc, /tmp, and the writable bind. The read-only ones
  // (/usr, /etc entries, the caller's --ro-bind) are in the root it serves.
  EXPECT_NE((mounts + " ").find(" /data-rw "), std::string::npos) << mounts;
  for (const char* bound : {" /usr ", " /etc/ssl ", " /etc/alternatives ", " /data-ro "})
    EXPECT_EQ((mounts + " ").find(bound), std::string::npos) << bound << " in: " << mounts;
  EXPECT_NE(r.out.find("certs True\nawk True\nro the caller's note\nusr refused True\n"),
            std::string::npos)
      << describe(r);
  std::ifstream written(data / "rw/from-the-tool");
  std::string text;
  std::getline(written, text);
  EXPECT_EQ(text, "written");
  EXPECT_FALSE(std::filesystem::exists("/usr/jail-probe"));
  EXPECT_EQ(host_mounts_with("jail-runsc"), "") << "a bind of the run is in the host's mounts";
}

// The binds are in runsc's mount namespace only, also while the tool runs.
TEST_F(Runsc, TheRootsBindsAreNeverInTheHostsMountTable) {
  TempDir work;
  // The tool writes a file through a writable bind once it runs, then waits for the test.
  std::filesystem::create_directories(work / "rw");
  std::filesystem::permissions(work / "rw", std::filesystem::perms::all);
  RunResult r;
  std::string during;
  std::thread observer([&] {
    for (int i = 0; i < 300 && !std::filesystem::exists(work / "rw/started"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    during = host_mounts_with("jail-runsc");
    std::ofstream(work / "rw/go") << "go\n";
  });
  r = runsc({"--bind", (work / "rw") + ":/rw", "--no-cwd", "--", "sh", "-c",
             "touch /rw/started; while [ ! -e /rw/go ]; do sleep 0.05; done; echo ran"});
  observer.join();
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "ran\n");
  EXPECT_TRUE(std::filesystem::exists(work / "rw/started"));
  EXPECT_EQ(during, "") << "the run's binds showed in the host's mount table while it ran";
  EXPECT_EQ(host_mounts_with("jail-runsc"), "");
}

// A mount point behind a symlink in a bound directory: gVisor's gofer resolves a mount's target
// following its links within the root, so the bind would land on the jail's /etc. jail refuses
// it before runsc starts, as the native run refuses it, for a run and an exported bundle alike.
TEST_F(Runsc, AMountPointBehindASymlinkInABoundDirectoryIsRefused) {
  TempDir work;
  std::filesystem::create_directories(work / "rw");
  std::filesystem::create_directories(work / "payload");
  write_file(work / "payload/planted", "planted\n");
  std::filesystem::create_symlink("/etc", work / "rw/link");
  const std::vector<std::string> binds = {"--bind", (work / "rw") + ":/w", "--ro-bind",
                                          (work / "payload") + ":/w/link"};
  std::vector<std::string> run = binds;
  for (const char* word : {"--no-cwd", "--", "cat", "/etc/planted"}) run.push_back(word);
  RunResult r = runsc(run);
  EXPECT_EQ(r.exit_code, 125) << describe(r);
  EXPECT_NE(r.err.find("the mount point /w/link is a symlink in " + (work / "rw") +
                       " (bound at /w) (to /etc)"),
            std::string::npos)
      << describe(r);
  EXPECT_EQ(r.out.find("planted"), std::string::npos) << describe(r);

  std::vector<std::string> exported = {"export-oci", "--bundle", work / "bundle"};
  exported.insert(exported.end(), binds.begin(), binds.end());
  for (const char* word : {"--no-cwd", "--", "true"}) exported.push_back(word);
  RunResult e = run_jail(exported);
  EXPECT_NE(e.exit_code, 0) << describe(e);
  EXPECT_NE(e.err.find("an OCI runtime would follow it"), std::string::npos) << describe(e);
  EXPECT_FALSE(std::filesystem::exists(work / "bundle/config.json"));
}

// A step of the binds that fails ends the start before runsc runs, named as a native run names
// it, never read as the tool's exit 125. The host never fails them by itself: `refusing`
// (tests/probes/refusing.c) makes the one call fail for jail and what it starts.
TEST_F(Runsc, ABindRunscsProcessCannotMakeIsNamed) {
  TempDir work;
  struct Refused {
    std::string call;  // NR[:ARG0]
    int err;
    std::string step;
    std::string words;
  };
  for (const Refused& refused :
       {Refused{std::to_string(SYS_unshare) + ":" + std::to_string(CLONE_NEWNS), EPERM,
                "runsc_mount_namespace",
                "cannot start runsc: its process could not make a private mount namespace of its "
                "own to bind the jail's root in: EPERM"},
        Refused{std::to_string(SYS_open_tree), EACCES, "open_bind_source",
                "cannot mount /usr at /usr: EACCES"}}) {
    const std::string status_file = work / (refused.step + ".json");
    const std::string out = shell_output(
        ": | " + shell_quote(std::string(JAIL_PROBE_DIR) + "/refusing") + " " + refused.call + " " +
        std::to_string(refused.err) + " " + shell_quote(JAIL_BINARY) +
        " --runtime runsc --no-cwd --status-file " + status_file + " -- true 2>&1; echo exit=$?");
    EXPECT_NE(out.find("exit=125"), std::string::npos) << out;
    EXPECT_NE(out.find(refused.words), std::string::npos) << out;
    const auto status = nlohmann::json::parse(read_file(status_file).value_or("{}"));
    EXPECT_EQ(status.value("outcome", ""), "setup_error") << status.dump();
    EXPECT_EQ(status["error"].value("step", ""), refused.step) << status.dump();
  }
  EXPECT_EQ(host_mounts_with("jail-runsc"), "");
}

}  // namespace
}  // namespace jail_test
