// Test support: starting jail-egress, reading its report, talking through it.
#include "egress_helper.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>
#include <thread>

namespace jail::egress::test {

namespace {

int listening_socket(std::uint16_t& port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
      listen(fd, SOMAXCONN) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    throw std::runtime_error("cannot make the proxy's listener");
  }
  port = ntohs(address.sin_port);
  return fd;
}

}  // namespace

EgressHelper::EgressHelper(const std::vector<std::string>& arguments) {
  const int listener = listening_socket(proxy_port_);
  int report_pair[2];
  int stderr_pipe[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, report_pair) != 0 ||
      pipe2(stderr_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("cannot make the report socket");
  }
  std::vector<std::string> argv = {EGRESS_BINARY, "--listen-fd", "3", "--report-fd", "4"};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  std::vector<char*> pointers;
  for (auto& argument : argv) pointers.push_back(argument.data());
  pointers.push_back(nullptr);
  pid_ = fork();
  if (pid_ == 0) {
    // Only async-signal-safe calls between fork and exec: the test has threads.
    // Moved out of the way first: either may already be 3 or 4.
    const int high_listener = fcntl(listener, F_DUPFD_CLOEXEC, 100);
    const int high_report = fcntl(report_pair[1], F_DUPFD_CLOEXEC, 100);
    dup2(high_listener, 3);
    dup2(high_report, 4);
    dup2(stderr_pipe[1], 2);
    execv(pointers[0], pointers.data());
    _exit(127);
  }
  close(listener);
  close(report_pair[1]);
  close(stderr_pipe[1]);
  report_ = report_pair[0];
  stderr_ = stderr_pipe[0];
  if (pid_ < 0) throw std::runtime_error("fork failed");
}

EgressHelper::~EgressHelper() {
  if (pid_ > 0 && wait_exit(std::chrono::milliseconds(0)) == -1) {
    kill(pid_, SIGKILL);
    (void)wait_exit(std::chrono::seconds(10));
  }
  if (report_ >= 0) close(report_);
  if (stderr_ >= 0) close(stderr_);
}

nlohmann::json EgressHelper::next_line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (const auto newline = pending_.find('\n'); newline != std::string::npos) {
      const std::string line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      return nlohmann::json::parse(line);
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd watched{report_, POLLIN, 0};
    if (left.count() <= 0 || poll(&watched, 1, static_cast<int>(left.count())) <= 0) return {};
    char buffer[4096];
    const ssize_t got = read(report_, buffer, sizeof buffer);
    if (got <= 0) return {};
    pending_.append(buffer, static_cast<std::size_t>(got));
  }
}

void EgressHelper::close_report() {
  close(report_);
  report_ = -1;
}

void EgressHelper::end_report() {
  shutdown(report_, SHUT_WR);
}

int EgressHelper::wait_exit(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      pid_ = -1;
      return status;
    }
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string EgressHelper::error_output() {
  std::string text;
  char buffer[4096];
  ssize_t got;
  while ((got = read(stderr_, buffer, sizeof buffer)) > 0) text.append(buffer, got);
  return text;
}

std::string exchange(std::uint16_t port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return "(connect failed)";
  }
  (void)send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string answer;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd watched{fd, POLLIN, 0};
    if (poll(&watched, 1, 1000) <= 0) continue;
    char buffer[65536];
    const ssize_t got = recv(fd, buffer, sizeof buffer, 0);
    if (got <= 0) break;
    answer.append(buffer, static_cast<std::size_t>(got));
  }
  close(fd);
  return answer;
}

}  // namespace jail::egress::test
