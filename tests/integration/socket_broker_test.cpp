// A host socket under a bound directory: a read-only bind does not stop connect() on a socket
// file, so a tmux or docker socket there would run commands on the host for the tool. The
// supervisor performs every connect itself and reaches a socket file only on the jail's own
// filesystems or where --allow-socket names it; datagram Unix sockets, which could send to one
// without connecting, are never made. Each attack runs as a tool would, and a host server counts
// what reached it.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "host_socket.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

// Python run in the jail: attempt(what, call) prints "what ok" or "what ERRNO".
constexpr const char* kAttempt =
    "import os, socket, threading, ctypes\n"
    "def attempt(what, call):\n"
    "    try:\n"
    "        call(); print(what, 'ok', flush=True)\n"
    "    except OSError as e: print(what, e.errno, flush=True)\n"
    "def stream(path):\n"
    "    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(path)\n";

class SocketBroker : public CallerTest {};

TEST_P(SocketBroker, AHostSocketInABindSeesNoConnection) {
  TempDir host;
  HostServer stream(host / "daemon.sock", SOCK_STREAM);
  HostServer seqpacket(host / "seq.sock", SOCK_SEQPACKET);
  HostServer dgram(host / "log.sock", SOCK_DGRAM);
  ASSERT_TRUE(stream.bound() && seqpacket.bound() && dgram.bound());
  const std::string status = cwd_ / "status.json";
  const std::string tool =
      std::string(kAttempt) +
      "attempt('stream', lambda: stream('/w/daemon.sock'))\n"
      "os.chdir('/w'); attempt('relative', lambda: stream('daemon.sock'))\n"
      "os.symlink('/w/daemon.sock', '/tmp/link.sock')\n"
      "attempt('link', lambda: stream('/tmp/link.sock'))\n"
      "os.symlink('/w', '/tmp/dir')\n"
      "attempt('dir-link', lambda: stream('/tmp/dir/daemon.sock'))\n"
      "q = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)\n"
      "attempt('seqpacket', lambda: q.connect('/w/seq.sock'))\n"
      "attempt('dgram', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))\n"
      "attempt('raw', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_RAW))\n"
      "attempt('pair', lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM))\n"
      // Its own sockets still work: a server in /tmp, reached by path and relatively.
      "own = socket.socket(socket.AF_UNIX); own.bind('/tmp/own.sock'); own.listen(64)\n"
      "attempt('own', lambda: stream('/tmp/own.sock'))\n"
      "os.chdir('/tmp'); attempt('own-relative', lambda: stream('own.sock'))\n"
      "attempt('stream-pair', lambda: socket.socketpair())\n";
  for (const char* bind : {"--ro-bind", "--bind"}) {
    const RunResult r = run({"--no-cwd", bind, host.path() + ":/w", "--status-file", status, "--",
                             "python3", "-c", tool});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    for (const char* refused : {"stream 13", "relative 13", "link 13", "dir-link 13",
                                "seqpacket 13", "dgram 13", "raw 13", "pair 13"}) {
      EXPECT_NE(r.out.find(std::string(refused) + "\n"), std::string::npos)
          << bind << " " << refused << "\n"
          << describe(r);
    }
    for (const char* works : {"own ok", "own-relative ok", "stream-pair ok"}) {
      EXPECT_NE(r.out.find(std::string(works) + "\n"), std::string::npos)
          << bind << " " << works << "\n"
          << describe(r);
    }
    // Reported like any denial: the stderr line names the socket and the flag, the status the
    // socket the tool named.
    EXPECT_NE(r.err.find("denied connect to /w/daemon.sock"), std::string::npos) << describe(r);
    EXPECT_NE(r.err.find("--allow-socket /w/daemon.sock"), std::string::npos) << describe(r);
    const auto json = nlohmann::json::parse(read_file(status).value_or("{}"));
    bool named = false;
    for (const auto& denial : json["denials"]["first"])
      named = named || denial.value("target", "") == "/w/daemon.sock";
    EXPECT_TRUE(named) << json.dump();
  }
  EXPECT_EQ(stream.reached(), 0);
  EXPECT_EQ(seqpacket.reached(), 0);
  EXPECT_EQ(dgram.reached(), 0);
}

// The check and the connect are one: the supervisor reads the address once and connects the
// socket file it resolved. A tool that flips the address under a waiting connect, from a jail
// socket to the host's, gets nowhere.
TEST_P(SocketBroker, FlippingTheAddressMidCallReachesNothing) {
  TempDir host;
  HostServer stream(host / "daemon.sock", SOCK_STREAM);
  ASSERT_TRUE(stream.bound());
  const std::string tool =
      std::string(kAttempt) +
      "own = socket.socket(socket.AF_UNIX); own.bind('/tmp/a.sock'); own.listen(4096)\n"
      "def drain():\n"
      "    while True: own.accept()[0].close()\n"
      "threading.Thread(target=drain, daemon=True).start()\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "address = ctypes.create_string_buffer(110)\n"
      "good = b'\\x01\\x00/tmp/a.sock\\x00\\x00\\x00\\x00'\n"
      "bad = b'\\x01\\x00/w/daemon.sock\\x00'\n"
      "ctypes.memmove(address, good, len(good))\n"
      "stop = False\n"
      "def flip():\n"
      "    while not stop:\n"
      "        ctypes.memmove(address, bad, len(bad)); ctypes.memmove(address, good, len(good))\n"
      "threading.Thread(target=flip, daemon=True).start()\n"
      "results = {}\n"
      "for i in range(3000):\n"
      "    s = socket.socket(socket.AF_UNIX)\n"
      "    r = libc.connect(s.fileno(), address, 110)\n"
      "    key = 0 if r == 0 else ctypes.get_errno()\n"
      "    results[key] = results.get(key, 0) + 1\n"
      "    s.close()\n"
      "stop = True\n"
      "print('results', sorted(results.items()), flush=True)\n";
  const RunResult r =
      run({"--no-cwd", "--ro-bind", host.path() + ":/w", "--", "python3", "-c", tool},
          {.timeout = 120s});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("results [(0, "), std::string::npos) << describe(r);  // some reached /tmp
  EXPECT_EQ(stream.reached(), 0) << describe(r);
}

TEST_P(SocketBroker, AllowSocketReachesItAsTheTool) {
  TempDir host;
  HostServer stream(host / "daemon.sock", SOCK_STREAM);
  HostServer other(host / "other.sock", SOCK_STREAM);
  ASSERT_TRUE(stream.bound() && other.bound());
  const std::string tool = std::string(kAttempt) +
                           "attempt('allowed', lambda: stream('/w/daemon.sock'))\n"
                           "attempt('other', lambda: stream('/w/other.sock'))\n";
  const RunResult r = run({"--no-cwd", "--ro-bind", host.path() + ":/w", "--allow-socket",
                           "/w/daemon.sock", "--", "python3", "-c", tool});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("allowed ok\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("other 13\n"), std::string::npos) << describe(r);
  uid_t peer = 0;
  EXPECT_EQ(stream.reached(&peer), 1);
  EXPECT_EQ(other.reached(), 0);
  // The peer is the tool's host uid, never jail's root: a server that trusts SO_PEERCRED sees
  // who is really asking.
  if (as_root()) {
    EXPECT_GE(peer, 1u << 31) << "the connect was made as uid " << peer;
  } else {
    EXPECT_EQ(peer, kNobodyUid);
  }
}

// --allow-socket names a file, found once before the tool starts: a tool that moves it away
// and puts a link to another host socket in its place reaches nothing new, and a path no bind
// shows, or one through a link, is refused before the run.
TEST_P(SocketBroker, AnAllowedSocketCannotBeRedirected) {
  TempDir writable;
  TempDir hidden;
  HostServer allowed(writable / "app.sock", SOCK_STREAM);
  HostServer other(hidden / "other.sock", SOCK_STREAM);
  ASSERT_TRUE(allowed.bound() && other.bound());
  const std::string tool = std::string(kAttempt) +
                           "os.rename('/rw/app.sock', '/rw/moved.sock')\n"
                           "os.symlink('/h/other.sock', '/rw/app.sock')\n"
                           "attempt('redirected', lambda: stream('/rw/app.sock'))\n"
                           "attempt('moved', lambda: stream('/rw/moved.sock'))\n";
  const RunResult r =
      run({"--no-cwd", "--bind", writable.path() + ":/rw", "--ro-bind", hidden.path() + ":/h",
           "--allow-socket", "/rw/app.sock", "--", "python3", "-c", tool});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("redirected 13\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("moved ok\n"), std::string::npos) << describe(r);  // the same file
  EXPECT_EQ(other.reached(), 0);
  EXPECT_EQ(allowed.reached(), 1);
  // Refused before the run: a path no bind shows, and one through a link.
  const RunResult in_tmp = run({"--no-cwd", "--allow-socket", "/tmp/x.sock", "--", "true"});
  EXPECT_EQ(in_tmp.exit_code, 125) << describe(in_tmp);
  EXPECT_NE(in_tmp.err.find("no bind shows that path"), std::string::npos) << describe(in_tmp);
  ::symlink((writable / "app.sock").c_str(), (hidden / "link.sock").c_str());
  const RunResult through_link = run({"--no-cwd", "--ro-bind", hidden.path() + ":/h",
                                      "--allow-socket", "/h/link.sock", "--", "true"});
  EXPECT_EQ(through_link.exit_code, 125) << describe(through_link);
  EXPECT_NE(through_link.err.find("symbolic link"), std::string::npos) << describe(through_link);
}

// Joining netlink multicast groups by connect is checked against the caller's capabilities,
// and the supervisor has more over the jail's namespaces than the tool: refused; bind joins
// them with the tool's own rights.
TEST_P(SocketBroker, NetlinkGroupsAreJoinedByBindNotByABrokeredConnect) {
  const std::string tool = std::string(kAttempt) +
                           "n = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)\n"
                           "attempt('connect-groups', lambda: n.connect((0, 1)))\n"
                           "attempt('connect-kernel', lambda: n.connect((0, 0)))\n"
                           "b = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)\n"
                           "attempt('bind-groups', lambda: b.bind((0, 1)))\n";
  const RunResult r = run({"--no-cwd", "--", "python3", "-c", tool});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("connect-groups 1\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("connect-kernel ok\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("bind-groups ok\n"), std::string::npos) << describe(r);
}

TEST_P(SocketBroker, LearningChecksConnectsToo) {
  TempDir host;
  HostServer stream(host / "daemon.sock", SOCK_STREAM);
  ASSERT_TRUE(stream.bound());
  TempDir out;
  const std::string tool =
      std::string(kAttempt) + "attempt('stream', lambda: stream('/w/daemon.sock'))\n";
  const RunResult r = run({"policy", "learn", "-o", out / "learned.policy", "--no-cwd", "--ro-bind",
                           host.path() + ":/w", "--", "python3", "-c", tool});
  EXPECT_NE(r.out.find("stream 13\n"), std::string::npos) << describe(r);
  EXPECT_EQ(stream.reached(), 0);
}

// A dry run's layer is the jail's own: a server the tool makes in the bound directory there is
// reachable, and a host one in the directory below the layer is not (overlayfs shows the tool
// an inode of its own for it, which no host socket listens on).
TEST_P(SocketBroker, ASocketInADryRunLayerIsTheJails) {
  TempDir project;
  TempDir sessions;
  // A session directory is the caller's alone.
  const uid_t owner = as_root() ? 0 : kNobodyUid;
  ASSERT_EQ(::chown(sessions.path().c_str(), owner, owner == 0 ? 0 : kNobodyGid), 0);
  ASSERT_EQ(::chmod(sessions.path().c_str(), 0700), 0);
  // A host server in the project itself, under the layer: out of reach all the same.
  HostServer host(project / "daemon.sock", SOCK_STREAM);
  ASSERT_TRUE(host.bound());
  const std::string tool = std::string(kAttempt) +
                           "own = socket.socket(socket.AF_UNIX); own.bind('/w/app.sock')\n"
                           "own.listen(1); attempt('layer', lambda: stream('/w/app.sock'))\n"
                           "attempt('lower', lambda: stream('/w/daemon.sock'))\n";
  const RunResult r = run({"--no-cwd", "--dry-run", "--session-dir", sessions.path(), "--bind",
                           project.path() + ":/w", "--", "python3", "-c", tool});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("layer ok\n"), std::string::npos) << describe(r);
  EXPECT_EQ(r.out.find("lower ok\n"), std::string::npos) << describe(r);
  EXPECT_EQ(host.reached(), 0) << describe(r);
  EXPECT_FALSE(std::filesystem::exists(project / "app.sock"));
}

TEST_P(SocketBroker, BadAllowancesAreRefusedBeforeTheRun) {
  const RunResult relative = run({"--no-cwd", "--allow-socket", "run/x.sock", "--", "true"});
  EXPECT_EQ(relative.exit_code, 125) << describe(relative);
  EXPECT_NE(relative.err.find("--allow-socket 'run/x.sock' must be an absolute path"),
            std::string::npos)
      << describe(relative);
  const RunResult own_net = run({"--no-cwd", "--allow-abstract", "x", "--", "true"});
  EXPECT_EQ(own_net.exit_code, 125) << describe(own_net);
  EXPECT_NE(own_net.err.find("only --net host can"), std::string::npos) << describe(own_net);
  const RunResult unfiltered =
      run({"--no-cwd", "--policy", "none", "--allow-socket", "/x.sock", "--", "true"});
  EXPECT_EQ(unfiltered.exit_code, 125) << describe(unfiltered);
  EXPECT_NE(unfiltered.err.find("need a seccomp policy"), std::string::npos)
      << describe(unfiltered);
}

JAIL_INSTANTIATE_FOR_CALLERS(SocketBroker);

}  // namespace
}  // namespace jail_test
