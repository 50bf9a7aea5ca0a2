// Test support: the built jail-egress started as jail would start it, with a listener and a
// report socket of the test's own, and its report lines read back.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace jail::egress::test {

class EgressHelper {
 public:
  // Starts EGRESS_BINARY with --listen-fd/--report-fd and `arguments` after them.
  explicit EgressHelper(const std::vector<std::string>& arguments);
  ~EgressHelper();  // kills (by pid) and reaps the helper if it still runs
  EgressHelper(const EgressHelper&) = delete;
  EgressHelper& operator=(const EgressHelper&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] std::uint16_t proxy_port() const { return proxy_port_; }

  // The next report line, or a null json when none comes within the timeout.
  [[nodiscard]] nlohmann::json next_line(
      std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Closes the test's end of the report socket, as jail does when its run ends.
  void close_report();
  // Shuts down the test's writing side of the report socket and reads on, as jail ends a run.
  void end_report();
  // The exit status (as waitpid gives it), or -1 when the helper runs on past the timeout.
  [[nodiscard]] int wait_exit(std::chrono::milliseconds timeout);
  // What the helper wrote to stderr, once it has exited.
  [[nodiscard]] std::string error_output();

 private:
  pid_t pid_ = -1;
  int report_ = -1;
  int stderr_ = -1;
  std::uint16_t proxy_port_ = 0;
  std::string pending_;
};

// Connects to 127.0.0.1:port, sends `request`, and returns all the answer until the proxy
// closes (or 10 s pass).
[[nodiscard]] std::string exchange(std::uint16_t port, const std::string& request);

}  // namespace jail::egress::test
