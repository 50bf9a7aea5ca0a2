// With --net host the jail shares the host's abstract Unix socket namespace: X11's socket
// (keystrokes into the caller's session) and daemons' control sockets. The supervisor performs
// the tool's connects and reaches an abstract name only where a process of the jail listens on
// it (and the tool's Landlock domain scopes abstract sockets, ABI 6+): a host server sees no
// connection and no datagram, while sockets the tool makes for itself work, and
// --allow-abstract reaches a host one on purpose.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "run_jail.hpp"

namespace jail_test {
namespace {

// An abstract socket ("\0name") of `type`, bound (and listening for a stream), non-blocking.
int abstract_server(const std::string& name, int type) {
  const int fd = ::socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      (type == SOCK_STREAM && ::listen(fd, 8) != 0)) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

class AbstractSockets : public CallerTest {};

TEST_P(AbstractSockets, TheHostsAreUnreachableWithNetHost) {
  const std::string stream_name = "jail-test-stream-" + std::to_string(::getpid());
  const std::string dgram_name = "jail-test-dgram-" + std::to_string(::getpid());
  const int stream = abstract_server(stream_name, SOCK_STREAM);
  const int dgram = abstract_server(dgram_name, SOCK_DGRAM);
  ASSERT_GE(stream, 0);
  ASSERT_GE(dgram, 0);
  TempDir work;
  const std::string status = work / "status.json";
  const std::string tool =
      "import socket\n"
      "def attempt(what, f):\n"
      "    try:\n"
      "        f(); print(what, 'ok')\n"
      "    except OSError as e: print(what, e.errno)\n"
      "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
      "attempt('stream', lambda: s.connect('\\0" +
      stream_name +
      "'))\n"
      "attempt('dgram', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b'x', "
      "'\\0" +
      dgram_name +
      "'))\n"
      "own = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
      "own.bind('\\0inside'); own.listen(1)\n"
      "c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
      "attempt('own', lambda: c.connect('\\0inside'))\n";
  const RunResult r =
      run({"--no-cwd", "--net", "host", "--status-file", status, "--", "python3", "-c", tool});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("stream 1\n"), std::string::npos) << describe(r);  // EPERM
  // No datagram Unix socket is made at all (the baseline): it could send to any name.
  EXPECT_NE(r.out.find("dgram 13\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("own ok\n"), std::string::npos) << describe(r);
  EXPECT_LT(::accept4(stream, nullptr, nullptr, SOCK_CLOEXEC), 0) << "the host server was reached";
  char byte;
  EXPECT_LT(::recv(dgram, &byte, 1, MSG_DONTWAIT), 0) << "a datagram reached the host server";
  ::close(stream);
  ::close(dgram);
  EXPECT_NE(read_file(status).value_or("").find("\"abstract_sockets_scoped\":true"),
            std::string::npos);
}

TEST_P(AbstractSockets, AllowAbstractReachesOneHostName) {
  const std::string allowed = "jail-test-allowed-" + std::to_string(::getpid());
  const std::string other = "jail-test-other-" + std::to_string(::getpid());
  const int allowed_server = abstract_server(allowed, SOCK_STREAM);
  const int other_server = abstract_server(other, SOCK_STREAM);
  ASSERT_GE(allowed_server, 0);
  ASSERT_GE(other_server, 0);
  const std::string tool =
      "import socket\n"
      "for name in ['" +
      allowed + "', '" + other +
      "', 'jail-test-nobody']:\n"
      "    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
      "    try:\n"
      "        s.connect('\\0' + name); print(name, 'ok')\n"
      "    except OSError as e: print(name, e.errno)\n";
  const RunResult r =
      run({"--no-cwd", "--net", "host", "--allow-abstract", allowed, "--", "python3", "-c", tool});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find(allowed + " ok\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find(other + " 1\n"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("jail-test-nobody 111\n"), std::string::npos) << describe(r);
  EXPECT_GE(::accept4(allowed_server, nullptr, nullptr, SOCK_CLOEXEC), 0);
  EXPECT_LT(::accept4(other_server, nullptr, nullptr, SOCK_CLOEXEC), 0);
  EXPECT_NE(r.err.find("denied connect to @" + other), std::string::npos) << describe(r);
  ::close(allowed_server);
  ::close(other_server);
}

// A name is checked right before its connect and the listener reached right after it: a tool
// that queues a connect to a name of its own behind connects it holds blocked, gives the name up
// and lets a host daemon take it, still reaches nothing of the host.
TEST_P(AbstractSockets, ANameGivenUpWhileQueuedReachesNoHostDaemon) {
  const std::string late = "jail-test-late-" + std::to_string(::getpid());
  const std::string tool =
      "import socket, threading, time\n"
      "full = socket.socket(socket.AF_UNIX); full.bind('\\0jail-test-full'); full.listen(0)\n"
      "def blocked():\n"
      "    s = socket.socket(socket.AF_UNIX)\n"
      "    try: s.connect('\\0jail-test-full')\n"
      "    except OSError: pass\n"
      "holders = [threading.Thread(target=blocked, daemon=True) for _ in range(24)]\n"
      "for t in holders: t.start()\n"
      "time.sleep(1)\n"
      "own = socket.socket(socket.AF_UNIX); own.bind('\\0" +
      late +
      "'); own.listen(8)\n"
      "result = []\n"
      "def connect_late():\n"
      "    s = socket.socket(socket.AF_UNIX)\n"
      "    try: s.connect('\\0" +
      late +
      "'); result.append('ok')\n"
      "    except OSError as e: result.append(e.errno)\n"
      "t = threading.Thread(target=connect_late); t.start(); time.sleep(0.5)\n"
      "own.close(); print('CLOSED', flush=True); time.sleep(1.5)\n"
      "full.close(); t.join(); print('late', result[0], flush=True)\n";
  auto jail = start({"--no-cwd", "--net", "host", "--", "python3", "-c", tool});
  ASSERT_TRUE(jail->wait_for_stdout("CLOSED", 20s));
  const int daemon = abstract_server(late, SOCK_STREAM);
  ASSERT_GE(daemon, 0);
  const RunResult r = jail->wait(30s);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out.find("late ok"), std::string::npos) << describe(r);
  EXPECT_LT(::accept4(daemon, nullptr, nullptr, SOCK_CLOEXEC), 0) << describe(r);
  ::close(daemon);
}

JAIL_INSTANTIATE_FOR_CALLERS(AbstractSockets);

}  // namespace
}  // namespace jail_test
