#include "egress_world.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

namespace jail_test {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), "egress world: " + what);
}

constexpr const char* kHosts =
    "127.0.0.1 localhost\n"
    "::1 localhost\n"
    "192.0.2.1 api.test\n"
    "192.0.2.2 other.test\n"
    "127.0.0.1 loop.test\n"
    "169.254.169.254 metadata.test\n"
    "10.11.12.13 private.test\n";

constexpr const char* kAddresses =
    "ip link set lo up && ip addr add 192.0.2.1/32 dev lo && ip addr add 192.0.2.2/32 dev lo && "
    "ip addr add 169.254.169.254/32 dev lo && ip addr add 10.11.12.13/32 dev lo";

}  // namespace

EgressWorld::EgressWorld() {
  host_net_ = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  host_mounts_ = ::open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
  if (host_net_ < 0 || host_mounts_ < 0) fail("open /proc/self/ns");
  if (::unshare(CLONE_NEWNET | CLONE_NEWNS) != 0) fail("unshare");
  // Private first: the hosts file bound below must not show up in the host's namespace.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) fail("make / private");
  if (std::system(kAddresses) != 0) throw std::runtime_error("egress world: cannot add addresses");
  dir_ = std::make_unique<TempDir>();
  write_file(*dir_ / "hosts", kHosts);
  if (::mount((*dir_ / "hosts").c_str(), "/etc/hosts", nullptr, MS_BIND, nullptr) != 0)
    fail("bind the private /etc/hosts");

  int in[2];
  int out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) fail("pipe2");
  const std::string script = std::string(JAIL_SOURCE_DIR) + "/tests/integration/egress_server.py";
  server_ = ::fork();
  if (server_ < 0) fail("fork");
  if (server_ == 0) {
    ::dup2(in[0], STDIN_FILENO);
    ::dup2(out[1], STDOUT_FILENO);
    ::execlp("python3", "python3", script.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  server_stdin_ = in[1];
  std::string said;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (said.find("ready") == std::string::npos) {
    pollfd entry{out[0], POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || ::poll(&entry, 1, static_cast<int>(left.count())) <= 0) break;
    char buffer[256];
    const ssize_t n = ::read(out[0], buffer, sizeof buffer);
    if (n <= 0) break;
    said.append(buffer, static_cast<std::size_t>(n));
  }
  // Kept open: the server may still be writing the rest of its line, and a closed pipe would
  // end it with EPIPE.
  server_stdout_ = out[0];
  if (said.find("ready") == std::string::npos)
    throw std::runtime_error("egress world: the servers did not start: " + said);
  // Reached from here before any test relies on it: a refusal later is the proxy's.
  for (const char* address : {"192.0.2.1", "192.0.2.2", "10.11.12.13"}) {
    const int probe = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in target{};
    target.sin_family = AF_INET;
    target.sin_port = htons(8080);
    ::inet_pton(AF_INET, address, &target.sin_addr);
    const bool reached =
        ::connect(probe, reinterpret_cast<const sockaddr*>(&target), sizeof target) == 0;
    ::close(probe);
    if (!reached) fail(std::string("reach the server at ") + address + ":8080");
  }
}

EgressWorld::~EgressWorld() {
  if (server_stdin_ >= 0) ::close(server_stdin_);
  if (server_stdout_ >= 0) ::close(server_stdout_);
  if (server_ > 0) {
    ::kill(server_, SIGKILL);
    ::waitpid(server_, nullptr, 0);
  }
  // Back where the test process came from; the world's namespaces go with their last process.
  if (host_net_ >= 0) {
    (void)::setns(host_net_, CLONE_NEWNET);
    ::close(host_net_);
  }
  if (host_mounts_ >= 0) {
    (void)::setns(host_mounts_, CLONE_NEWNS);
    ::close(host_mounts_);
  }
}

}  // namespace jail_test
