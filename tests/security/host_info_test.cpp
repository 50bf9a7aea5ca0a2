// What of the host a tool can learn: /etc/shadow, $HOME, the caller's environment, other
// processes, host interfaces and abstract unix sockets, the kernel keyring, the kernel log.
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <random>

#include "host_socket.hpp"
#include "support.hpp"

namespace jail_security {
namespace {

class HostInfo : public SecurityTest {};

std::string random_token(const char* prefix) {
  std::random_device rd;
  return std::string(prefix) + std::to_string(rd()) + std::to_string(rd());
}

TEST_P(HostInfo, ShadowRootAndHomeAreAbsent) {
  const char* home = std::getenv("HOME");
  const std::string host_home = home != nullptr && *home != '\0' ? home : "/root";
  Outcome o = jail({}, {sec_probe("sec_info"), "paths", "/etc/shadow", "/etc/gshadow", "/root",
                        host_home, "/home"});
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  bool contained = true;
  for (const std::string& p : {std::string("/etc/shadow"), std::string("/etc/gshadow"),
                               std::string("/root"), host_home, std::string("/home")}) {
    if (!one_of(o.value("open:" + p), {"ENOENT", "EACCES"})) contained = false;
  }
  row("shadow_root_home", "ENOENT/EACCES for /etc/shadow, /root, $HOME, /home",
      o.value("open:/etc/shadow") + "," + o.value("open:/root") + "," +
          o.value("open:" + host_home),
      contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(HostInfo, CallersEnvironmentDoesNotLeak) {
  RunOptions options;
  options.extra_env = {"AWS_SECRET_ACCESS_KEY=jail-sec-aws", "SSH_AUTH_SOCK=/run/jail-sec.sock"};
  Outcome o = jail({}, {sec_probe("sec_info"), "env"}, options);
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  const bool contained = o.run.out.find(kCallerSecretValue) == std::string::npos &&
                         o.run.out.find("jail-sec-aws") == std::string::npos &&
                         o.run.out.find("SSH_AUTH_SOCK") == std::string::npos;
  row("caller_environment", "no caller variable inside", contained ? "none leaked" : "leaked",
      contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(HostInfo, OtherProcessesAreInvisible) {
  // A host process with a unique token in its command line, owned by the tool's own host uid.
  const std::string token = random_token("jail-sec-visible-");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setresgid(kNobodyGid, kNobodyGid, kNobodyGid) != 0) _exit(120);
    if (setresuid(kNobodyUid, kNobodyUid, kNobodyUid) != 0) _exit(120);
    execl("/bin/sleep", "sleep", "60", token.c_str(), static_cast<char*>(nullptr));
    _exit(121);
  }
  // Given reversed: jail's own command line (PID 1's, see JailsCommandLineIsNotVisible) would
  // otherwise hold the token.
  Outcome o = jail({}, {sec_probe("sec_info"), "procs", std::string(token.rbegin(), token.rend())});
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  const int count = std::atoi(o.value("pid_count").c_str());
  const bool contained = o.value("token_seen") == "no" && count >= 1 && count <= 3;
  row("other_processes", "host process invisible; at most 3 pids",
      "seen=" + o.value("token_seen") + " pids=" + o.value("pids"), contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(HostInfo, OnlyLoopbackInterface) {
  Outcome o = jail({}, {sec_probe("sec_info"), "ifaces"});
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  const bool contained = o.value("ifaces") == "lo";
  row("host_interfaces", "lo only", o.value("ifaces"), contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(HostInfo, HostAbstractSocketIsUnreachable) {
  // Abstract unix sockets belong to the network namespace: a host listener is out of reach.
  const std::string name = random_token("jail-sec-abstract-");
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), size), 0) << std::strerror(errno);
  ASSERT_EQ(listen(fd, 8), 0);
  Outcome o = jail({}, {sec_probe("sec_info"), "abstract", name});
  close(fd);
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  const bool contained = o.value("connect_abstract") == "ECONNREFUSED";
  row("host_abstract_socket", "ECONNREFUSED", o.value("connect_abstract"), contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(HostInfo, HostSocketInABindIsUnreachable) {
  // A daemon's socket file in a directory the tool gets read-only: connect() ignores a read-only
  // bind, so the supervisor (natively) or gVisor's gofer (runsc) must keep the tool out; no
  // datagram socket is made that could send to it.
  TempDir host;
  HostServer stream(host / "host.sock", SOCK_STREAM);
  HostServer dgram(host / "log.sock", SOCK_DGRAM);
  ASSERT_TRUE(stream.bound() && dgram.bound());
  Outcome o =
      jail({"--ro-bind", host.path() + ":/w"}, {sec_probe("sec_info"), "unix", "/w/host.sock"});
  Outcome d =
      jail({"--ro-bind", host.path() + ":/w"}, {sec_probe("sec_info"), "unix", "/w/log.sock"});
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  const int reached = stream.reached() + dgram.reached();
  const bool contained = reached == 0 && !o.value("connect_unix").empty() &&
                         o.value("connect_unix") != "OK" && d.value("socket_dgram") == "EACCES" &&
                         d.value("sendto_unix").empty();
  row("host_socket_in_bind", "refused, nothing reached",
      o.value("connect_unix") + ", dgram " + d.value("socket_dgram") + ", " +
          std::to_string(reached) + " reached",
      contained);
  EXPECT_TRUE(contained) << o.describe() << d.describe();
}

TEST_P(HostInfo, KeyringCallsAreKilled) {
  // keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0), then add_key.
  Outcome o =
      jail({}, {"/probes/sc_raw", "250", "0", "-3", "0", ",", "248", "0", "0", "0", "0", "-3"});
  const bool contained = o.run.exit_code == 159 && o.outcome() == "violation" &&
                         o.violation_syscall() == "keyctl" &&
                         o.run.out.find("result 0") == std::string::npos;
  row("keyctl", "exit 159, violation keyctl",
      std::to_string(o.run.exit_code) + " " + o.violation_syscall(), contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(HostInfo, HostKeysAreInvisibleWithoutAPolicy) {
  // A key in the caller's user keyring; /proc/keys inside (no policy) must not show it.
  const std::string desc = random_token("jail-sec-key-");
  const long key = syscall(SYS_add_key, "user", desc.c_str(), "secret", 6, -4 /* @u */);
  if (key < 0) GTEST_SKIP() << "add_key on the host: " << std::strerror(errno);
  Outcome o = jail(no_policy(), {sec_probe("sec_info"), "keys", desc});
  syscall(SYS_keyctl, 21 /* KEYCTL_INVALIDATE */, key);
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  const bool contained = o.value("host_key_seen") != "yes";
  row("host_keyring (--policy none)", "host key not listed",
      "seen=" + o.value("host_key_seen") + " lines=" + o.value("proc_keys_lines") +
          (o.value("open_proc_keys").empty() ? "" : " open=" + o.value("open_proc_keys")),
      contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(HostInfo, KernelLogIsRefused) {
  Outcome o = jail({}, {sec_probe("sec_info"), "dmesg"});
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  // The default policy answers syslog EPERM, under runsc too (without a policy gVisor answers
  // with its own made-up log, "Starting gVisor...", never the host's).
  const bool contained = one_of(o.value("syslog_read_all"), {"EPERM", "ENOSYS"}) &&
                         one_of(o.value("open_dev_kmsg"), {"ENOENT", "EACCES", "EPERM"});
  row("dmesg", "syslog EPERM; /dev/kmsg ENOENT",
      o.value("syslog_read_all") + "," + o.value("open_dev_kmsg"), contained);
  EXPECT_TRUE(contained) << o.describe();
}

TEST_P(HostInfo, JailsCommandLineIsNotVisible) {
  // PID 1 inside is jail's reaper, a fork of jail that never execs: its /proc/1/cmdline is
  // the caller's whole jail command line — host paths of binds and status files, --env values.
  // The tool should not learn how it was launched.
  // The status file lives in scratch_ and the probes in JAIL_PROBE_DIR, both host paths.
  Outcome o = jail({}, {sec_probe("sec_info"), "cmdline1"});
  ASSERT_EQ(o.run.exit_code, 0) << o.describe();
  const std::string cmdline = o.value("proc1_cmdline");
  const bool contained = cmdline.find(scratch_.path()) == std::string::npos &&
                         cmdline.find(JAIL_PROBE_DIR) == std::string::npos;
  row("jail_command_line_via_proc1", "no host path of the caller's command line",
      cmdline.empty() ? o.value("open_proc1_cmdline") : cmdline.substr(0, 120), contained);
  EXPECT_TRUE(contained) << o.describe();
}

JAIL_SECURITY_INSTANTIATE(HostInfo);

}  // namespace
}  // namespace jail_security
