// --net-allow (issue 45): the tool's only way out is jail's egress proxy, which reaches exactly
// the names and ports allowed, refuses names that resolve to loopback, link-local, metadata and
// private addresses, and reports every attempt. Each test runs in a network of its own
// (egress_world.hpp) whose servers all answer, so a refusal is jail's doing; as a root and as an
// unprivileged caller.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "egress_world.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

using json = nlohmann::json;

// A tool that fetches each URL given with urllib (which follows HTTP_PROXY) and prints
// "<url> <status> <body>" or "<url> error <reason>".
constexpr const char* kFetch = R"(
import sys, urllib.request, urllib.error
for url in sys.argv[1:]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            print(url, r.status, r.read().decode().strip())
    except urllib.error.HTTPError as e:
        print(url, e.code, e.read().decode().strip())
    except Exception as e:
        print(url, 'error', e)
)";

class EgressTest : public ::testing::TestWithParam<Caller> {
 protected:
  static void SetUpTestSuite() { world_ = std::make_unique<EgressWorld>(); }
  static void TearDownTestSuite() { world_.reset(); }

  // Runs jail with `flags`, then `--` and `command`; the status JSON is in status_.
  RunResult run(std::vector<std::string> flags, const std::vector<std::string>& command) {
    std::vector<std::string> args = {"--no-cwd", "--status-file", dir_ / "status.json"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.emplace_back("--");
    args.insert(args.end(), command.begin(), command.end());
    RunOptions options;
    options.caller = GetParam();
    RunResult result = run_jail(args, options);
    status_ = json::parse(read_file(dir_ / "status.json").value_or("{}"), nullptr, false);
    return result;
  }

  RunResult fetch(std::vector<std::string> flags, const std::vector<std::string>& urls) {
    std::vector<std::string> command = {"python3", "-c", kFetch};
    command.insert(command.end(), urls.begin(), urls.end());
    return run(std::move(flags), command);
  }

  // The status JSON's connections to `name`.
  std::vector<json> connections_to(const std::string& name) const {
    std::vector<json> found;
    if (!status_.is_object() || !status_.contains("connections")) return found;
    for (const json& connection : status_["connections"]) {
      if (connection.value("name", "") == name) found.push_back(connection);
    }
    return found;
  }

  static std::unique_ptr<EgressWorld> world_;
  TempDir dir_;
  json status_;
};

std::unique_ptr<EgressWorld> EgressTest::world_;

TEST_P(EgressTest, AnAllowedNameAndPortIsFetchedWithUrllib) {
  const RunResult result = fetch({"--net-allow", "api.test:8080"}, {"http://api.test:8080/hello"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  // The server saw an origin-form request for the name asked, and the proxy's Connection: close.
  EXPECT_NE(result.out.find("http://api.test:8080/hello 200 served by 192.0.2.1:8080 path /hello "
                            "host api.test:8080 connection close"),
            std::string::npos)
      << describe(result);
  const auto seen = connections_to("api.test");
  ASSERT_EQ(seen.size(), 1u) << status_.dump(2);
  EXPECT_EQ(seen[0]["allowed"], true);
  EXPECT_EQ(seen[0]["port"], 8080);
  EXPECT_EQ(seen[0]["address"], "192.0.2.1");
  EXPECT_GT(seen[0]["bytes_out"].get<std::uint64_t>(), 20u) << seen[0].dump();
  EXPECT_GT(seen[0]["bytes_in"].get<std::uint64_t>(), 60u) << seen[0].dump();
}

TEST_P(EgressTest, AnAllowedNameIsFetchedWithCurlPlainAndThroughATunnel) {
  // -p: curl tunnels even plain HTTP through CONNECT, so both of the proxy's ways are used.
  const RunResult result =
      run({"--net-allow", "api.test:8080"},
          {"sh", "-c",
           "curl -sS http://api.test:8080/plain && curl -sS -p http://api.test:8080/tunnel"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("served by 192.0.2.1:8080 path /plain"), std::string::npos)
      << describe(result);
  EXPECT_NE(result.out.find("served by 192.0.2.1:8080 path /tunnel"), std::string::npos)
      << describe(result);
  const auto seen = connections_to("api.test");
  ASSERT_EQ(seen.size(), 2u) << status_.dump(2);
  EXPECT_EQ(seen[0]["method"], "GET");
  EXPECT_EQ(seen[1]["method"], "CONNECT");
  for (const json& connection : seen) EXPECT_EQ(connection["allowed"], true) << connection.dump();
}

TEST_P(EgressTest, ADeniedNameIsRefusedAndNamedInTheStatus) {
  const RunResult result = fetch({"-v", "--net-allow", "api.test:8080"},
                                 {"http://other.test:8080/", "http://api.test:8080/after"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("http://other.test:8080/ 403"), std::string::npos) << describe(result);
  EXPECT_EQ(result.out.find("served by 192.0.2.2"), std::string::npos) << describe(result);
  // The refusal does not stop what is allowed.
  EXPECT_NE(result.out.find("path /after"), std::string::npos) << describe(result);
  const auto seen = connections_to("other.test");
  ASSERT_EQ(seen.size(), 1u) << status_.dump(2);
  EXPECT_EQ(seen[0]["allowed"], false);
  EXPECT_EQ(seen[0]["reason"], "not_in_allow_list");
  EXPECT_EQ(seen[0]["port"], 8080);
  // -v: said as it happened.
  EXPECT_NE(result.err.find("other.test:8080"), std::string::npos) << describe(result);
}

TEST_P(EgressTest, AProfileListsTheNamesAndTheCommandLineAddsToThem) {
  write_file(dir_ / "egress.toml", "net-allow = [\"api.test:8080\"]\n");
  const RunResult result =
      fetch({"--profile", dir_ / "egress.toml", "--net-allow", "other.test:8080"},
            {"http://api.test:8080/profile", "http://other.test:8080/line"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("served by 192.0.2.1:8080 path /profile"), std::string::npos)
      << describe(result);
  EXPECT_NE(result.out.find("served by 192.0.2.2:8080 path /line"), std::string::npos)
      << describe(result);
}

TEST_P(EgressTest, AnAllowedNameOnAnotherPortIsRefused) {
  const RunResult result = fetch({"--net-allow", "api.test:8080"}, {"http://api.test:8081/"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("http://api.test:8081/ 403"), std::string::npos) << describe(result);
  EXPECT_EQ(result.out.find("served by"), std::string::npos) << describe(result);
  const auto seen = connections_to("api.test");
  ASSERT_EQ(seen.size(), 1u) << status_.dump(2);
  EXPECT_EQ(seen[0]["port"], 8081);
  EXPECT_EQ(seen[0]["allowed"], false);
}

TEST_P(EgressTest, ANameWithoutAPortGetsOnly443And80) {
  const RunResult result = fetch({"--net-allow", "api.test"}, {"http://api.test:8080/"});
  EXPECT_NE(result.out.find("http://api.test:8080/ 403"), std::string::npos) << describe(result);
}

TEST_P(EgressTest, ADirectConnectToTheServersAddressIsRefused) {
  // Past the proxy: the server's IP (on the world's loopback), its name, the tool's own
  // loopback at that port, and curl told to ignore the proxy variables.
  const RunResult result = run({"--net-allow", "api.test:8080"}, {"python3", "-c", R"(
import socket, subprocess
for host in ['192.0.2.1', '127.0.0.1', '169.254.169.254']:
    try:
        socket.create_connection((host, 8080), timeout=5)
        print(host, 'CONNECTED')
    except OSError as e:
        print(host, 'refused', e.errno)
r = subprocess.run(['curl', '-sS', '--max-time', '5', '--noproxy', '*', 'http://192.0.2.1:8080/'],
                   capture_output=True, text=True)
print('curl-noproxy', r.returncode, r.stdout.strip())
)"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(result.out.find("CONNECTED"), std::string::npos) << describe(result);
  EXPECT_EQ(result.out.find("served by"), std::string::npos) << describe(result);
  EXPECT_NE(result.out.find("192.0.2.1 refused"), std::string::npos) << describe(result);
  EXPECT_NE(result.out.find("curl-noproxy 7"), std::string::npos) << describe(result);
}

TEST_P(EgressTest, UdpAndDnsAreRefused) {
  // The world answers UDP at 192.0.2.1:53; the tool's names resolve nowhere.
  const RunResult result = run({"--net-allow", "api.test:8080"}, {"python3", "-c", R"(
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
try:
    s.sendto(b'q', ('192.0.2.1', 53))
    print('udp answered', s.recvfrom(100))
except OSError as e:
    print('udp refused', e.errno)
try:
    print('resolved', socket.getaddrinfo('api.test', 8080))
except OSError as e:
    print('dns refused')
for family in (socket.AF_PACKET, socket.AF_INET, socket.AF_INET6):
    try:
        socket.socket(family, socket.SOCK_RAW, 255 if family != socket.AF_PACKET else 0)
        print('raw socket', family)
    except OSError as e:
        print('raw refused', family)
)"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("udp refused"), std::string::npos) << describe(result);
  EXPECT_EQ(result.out.find("udp answered"), std::string::npos) << describe(result);
  EXPECT_NE(result.out.find("dns refused"), std::string::npos) << describe(result);
  EXPECT_EQ(result.out.find("raw socket"), std::string::npos) << describe(result);
}

TEST_P(EgressTest, AnAllowedNameResolvingToMetadataLoopbackOrPrivateIsRefused) {
  const RunResult result =
      fetch({"--net-allow", "metadata.test:80", "--net-allow", "loop.test:8080", "--net-allow",
             "private.test:8080"},
            {"http://metadata.test/latest/meta-data/", "http://loop.test:8080/",
             "http://private.test:8080/", "http://169.254.169.254/latest/meta-data/"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_EQ(result.out.find("served by"), std::string::npos) << describe(result);
  for (const char* name : {"metadata.test", "loop.test", "private.test"}) {
    const auto seen = connections_to(name);
    ASSERT_EQ(seen.size(), 1u) << name << status_.dump(2);
    EXPECT_EQ(seen[0]["allowed"], false) << seen[0].dump();
    EXPECT_EQ(seen[0]["reason"], "address_refused") << seen[0].dump();
  }
  // The metadata address itself, named by IP, is not in the list at all.
  const auto by_ip = connections_to("169.254.169.254");
  ASSERT_EQ(by_ip.size(), 1u) << status_.dump(2);
  EXPECT_EQ(by_ip[0]["allowed"], false);
}

TEST_P(EgressTest, PrivateAddressesOpenOnlyWithNetAllowPrivate) {
  const RunResult result = fetch({"--net-allow", "private.test:8080", "--net-allow-private"},
                                 {"http://private.test:8080/private"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("served by 10.11.12.13:8080 path /private"), std::string::npos)
      << describe(result);
}

TEST_P(EgressTest, AnExplicitIpEntryReachesThatAddress) {
  const RunResult result = fetch({"--net-allow", "127.0.0.1:8080"}, {"http://127.0.0.1:8080/ip"});
  // NO_PROXY keeps 127.0.0.1 the tool's own: urllib goes direct, to its own empty loopback.
  EXPECT_EQ(result.out.find("served by"), std::string::npos) << describe(result);
  const RunResult proxied = run(
      {"--net-allow", "127.0.0.1:8080"},
      {"curl", "-sS", "--noproxy", "", "-x", "http://127.0.0.1:3128", "http://127.0.0.1:8080/ip"});
  EXPECT_NE(proxied.out.find("served by 127.0.0.1:8080 path /ip"), std::string::npos)
      << describe(proxied);
}

TEST_P(EgressTest, ATlsServerNameOtherThanTheTunnelsIsRefused) {
  // CONNECT to the allowed name, then a ClientHello naming another: the tunnel is closed
  // before a byte reaches the server.
  const RunResult result = run({"--net-allow", "api.test:8443"}, {"python3", "-c", R"(
import socket, ssl
def tunnel(sni):
    s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
    s.sendall(b'CONNECT api.test:8443 HTTP/1.1\r\nHost: api.test:8443\r\n\r\n')
    head = s.recv(200)
    print(sni, 'connect', head.split(b'\r\n')[0].decode())
    context = ssl.create_default_context()
    try:
        context.wrap_socket(s, server_hostname=sni)
        print(sni, 'handshake done')
    except Exception as e:
        print(sni, 'tls ended', type(e).__name__)
tunnel('other.test')
tunnel('api.test')
)"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("other.test connect HTTP/1.1 200"), std::string::npos)
      << describe(result);
  const auto seen = connections_to("api.test");
  ASSERT_EQ(seen.size(), 2u) << status_.dump(2);
  EXPECT_EQ(seen[0]["allowed"], false) << seen[0].dump();
  EXPECT_EQ(seen[0]["reason"], "tls_sni_mismatch") << seen[0].dump();
  EXPECT_EQ(seen[0]["sni"], "other.test") << seen[0].dump();
  // The matching name passes the check (the plain-HTTP server then fails the handshake).
  EXPECT_EQ(seen[1]["allowed"], true) << seen[1].dump();
}

TEST_P(EgressTest, WhatTheToolNamesCannotForgeJailsLogOrStatus) {
  // A server name with a line break, a forged log line, a terminal escape and invalid UTF-8:
  // jail's stderr shows it escaped on one line, the status JSON holds it as sent.
  const RunResult result = run({"--net-allow", "api.test:8443"}, {"python3", "-c", R"(
import socket
name = b'x\njail: forged line\n\x1b[31mred\xff'
sni = b'\x00' + len(name).to_bytes(2, 'big') + name
names = len(sni).to_bytes(2, 'big') + sni
extension = b'\x00\x00' + len(names).to_bytes(2, 'big') + names
body = (b'\x03\x03' + bytes(32) + b'\x00' + b'\x00\x02\x13\x01' + b'\x01\x00' +
        len(extension).to_bytes(2, 'big') + extension)
handshake = b'\x01' + len(body).to_bytes(3, 'big') + body
s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
s.sendall(b'CONNECT api.test:8443 HTTP/1.1\r\nHost: api.test:8443\r\n\r\n')
print(s.recv(200).split(b'\r\n')[0].decode())
s.sendall(b'\x16\x03\x01' + len(handshake).to_bytes(2, 'big') + handshake)
print('after hello', s.recv(100))
)"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  EXPECT_NE(result.out.find("after hello b''"), std::string::npos) << describe(result);
  for (const std::string& line : split_lines(result.err)) {
    EXPECT_FALSE(line.starts_with("jail: forged")) << describe(result);
  }
  EXPECT_EQ(result.err.find('\x1b'), std::string::npos) << describe(result);
  EXPECT_NE(result.err.find("tls_sni_mismatch"), std::string::npos) << describe(result);
  const auto seen = connections_to("api.test");
  ASSERT_EQ(seen.size(), 1u) << status_.dump(2);
  EXPECT_EQ(seen[0]["reason"], "tls_sni_mismatch");
  // Kept as it was sent, line break and escape included (the invalid byte as U+FFFD).
  EXPECT_EQ(seen[0]["sni"], "x\njail: forged line\n\x1b[31mred\xef\xbf\xbd") << seen[0].dump();
}

TEST_P(EgressTest, WhatATunnelMovedIsReportedWhenItsServerNeverAnswers) {
  // The tool sends 1.2 MB and exits; the server reads it all and stays silent, so the tunnel is
  // still open when the jail ends: its counts come from the helper when jail stops it.
  const RunResult result = run({"--net-allow", "api.test:9100"}, {"python3", "-c", R"(
import socket
s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
s.sendall(b'CONNECT api.test:9100 HTTP/1.1\r\nHost: api.test:9100\r\n\r\n')
print(s.recv(200).split(b'\r\n')[0].decode())
s.sendall(b'y' * 1200000)
print('sent')
)"});
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  const auto seen = connections_to("api.test");
  ASSERT_EQ(seen.size(), 1u) << status_.dump(2);
  EXPECT_EQ(seen[0]["allowed"], true);
  EXPECT_EQ(seen[0]["open_at_end"], true) << seen[0].dump();
  EXPECT_EQ(seen[0]["bytes_out"], 1200000) << seen[0].dump();
}

// Host pids of `parent`'s children, from every thread's list.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  const std::string tasks = "/proc/" + std::to_string(parent) + "/task";
  DIR* dir = ::opendir(tasks.c_str());
  if (dir == nullptr) return children;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream list(tasks + "/" + entry->d_name + "/children");
    for (pid_t pid; list >> pid;) children.push_back(pid);
  }
  ::closedir(dir);
  return children;
}

// The "Name:" line's value of /proc/PID/status.
std::string status_field(pid_t pid, const std::string& name) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(name + ":", 0) == 0) return trim(line.substr(name.size() + 1));
  }
  return {};
}

// The numbers of a "Uid:" or "Gid:" line: real, effective, saved, filesystem.
std::vector<unsigned long> ids_in(const std::string& line) {
  std::vector<unsigned long> ids;
  std::istringstream fields(line);
  for (unsigned long id; fields >> id;) ids.push_back(id);
  return ids;
}

TEST_P(EgressTest, TheProxyRunsUnprivilegedUnderItsOwnFilterAndEndsWithTheJail) {
  RunOptions options;
  options.caller = GetParam();
  const std::string marker = "marker-" + std::to_string(::getpid()) + ".test";
  JailProcess jail({"--no-cwd", "--net-allow", "api.test:8080", "--net-allow", marker, "--", "sh",
                    "-c", "echo started; sleep 30"},
                   options);
  ASSERT_TRUE(jail.wait_for_stdout("started", 20s));
  pid_t proxy = -1;
  for (int tries = 0; tries < 200 && proxy < 0; ++tries) {
    for (const pid_t child : children_of(jail.pid())) {
      if (status_field(child, "Name") == "jail-egress" && status_field(child, "Seccomp") == "2")
        proxy = child;
    }
    if (proxy < 0) std::this_thread::sleep_for(25ms);
  }
  ASSERT_GT(proxy, 0) << "no filtered jail-egress below jail " << jail.pid();
  const std::vector<unsigned long> uids = ids_in(status_field(proxy, "Uid"));
  const std::vector<unsigned long> gids = ids_in(status_field(proxy, "Gid"));
  ASSERT_EQ(uids.size(), 4u);
  ASSERT_EQ(gids.size(), 4u);
  for (const unsigned long id : uids) EXPECT_NE(id, 0u) << "the proxy holds root";
  for (const unsigned long id : gids) EXPECT_NE(id, 0u) << "the proxy holds group root";
  EXPECT_EQ(status_field(proxy, "Groups"), "");
  for (const char* caps : {"CapInh", "CapPrm", "CapEff", "CapAmb"})
    EXPECT_EQ(status_field(proxy, caps), "0000000000000000") << caps;
  EXPECT_EQ(status_field(proxy, "NoNewPrivs"), "1");
  // A root caller's proxy runs as the jail's own host uid, never nobody or root.
  if (GetParam() == Caller::root) {
    EXPECT_GE(uids[0], 0x80000000ul);
  }
  ASSERT_EQ(::kill(jail.pid(), SIGTERM), 0);
  const RunResult result = jail.wait(20s);
  EXPECT_EQ(result.exit_code, 128 + SIGTERM) << describe(result);
  EXPECT_EQ(processes_with(marker), 0) << "the proxy outlived its jail";
}

TEST_P(EgressTest, AProxyThatDiesLeavesTheToolNoWayOut) {
  // The helper killed mid-run: its listener goes with it, and the tool's next connect is
  // refused, never let through some other way.
  RunOptions options;
  options.caller = GetParam();
  JailProcess jail({"--no-cwd", "--net-allow", "api.test:8080", "--", "python3", "-c", R"(
import socket, time
socket.create_connection(('127.0.0.1', 3128), timeout=5).close()
print('reached', flush=True)
for _ in range(200):
    try:
        socket.create_connection(('127.0.0.1', 3128), timeout=5).close()
    except OSError as e:
        print('refused', e.errno, flush=True)
        break
    time.sleep(0.1)
else:
    print('still open')
)"},
                   options);
  ASSERT_TRUE(jail.wait_for_stdout("reached", 20s));
  pid_t proxy = -1;
  for (const pid_t child : children_of(jail.pid())) {
    if (status_field(child, "Name") == "jail-egress") proxy = child;
  }
  ASSERT_GT(proxy, 0);
  ASSERT_EQ(::kill(proxy, SIGKILL), 0);
  const RunResult result = jail.wait(30s);
  EXPECT_EQ(result.exit_code, 0) << describe(result);
  // Refused (111), or reset (104) where its connect was queued when the listener went.
  EXPECT_TRUE(result.out.find("refused 111") != std::string::npos ||
              result.out.find("refused 104") != std::string::npos)
      << describe(result);
  EXPECT_NE(result.err.find("egress proxy ended while the tool ran"), std::string::npos)
      << describe(result);
}

JAIL_INSTANTIATE_FOR_CALLERS(EgressTest);

}  // namespace
}  // namespace jail_test
