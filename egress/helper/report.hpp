// Host side: the JSON lines the helper writes to jail, one object a line, each with one write.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace jail::egress {

// Why a connection was refused; the report's "reason".
enum class Reason {
  not_in_allow_list,
  address_refused,
  resolve_failed,
  connect_failed,
  tls_sni_mismatch,
  bad_request,
  too_many_connections,
};

// One decision about one connection: a "connection" line.
struct Decision {
  std::uint64_t id = 0;
  std::string name;  // the host the tool asked for (empty when the request named none)
  std::uint16_t port = 0;
  std::string method;
  std::optional<Reason> refusal;  // nothing: allowed
  std::string detail;             // when refused: for a person
  std::string address;            // the address connected to, when there is one
  std::optional<std::string> sni;
};

// The bytes an allowed connection has moved so far, counted as the relay moves them: a run can
// end while a tunnel is still open, and what went through it must be reported then too.
struct Traffic {
  std::atomic<std::uint64_t> bytes_out{0};  // tool to server
  std::atomic<std::uint64_t> bytes_in{0};   // server to tool
};

class Report {
 public:
  explicit Report(int fd) : fd_(fd) {}

  void ready();
  void connection(const Decision& decision);
  // An allowed connection's traffic, counted from now until closed(id).
  [[nodiscard]] std::shared_ptr<Traffic> opened(std::uint64_t id);
  // Its "closed" line, with the counts.
  void closed(std::uint64_t id);
  // Jail has ended the run: a "closed" line with "open":true for every connection still open,
  // and no line after.
  void end_of_run();

 private:
  void write_line(const std::string& line);
  void send_line(const std::string& line);  // with mutex_ held

  int fd_;
  std::mutex mutex_;  // lines of concurrent connections never interleave
  std::map<std::uint64_t, std::shared_ptr<Traffic>> open_;
  bool ended_ = false;
};

// Reports the connection closed when it goes out of scope, on every way out of serving it.
class OpenConnection {
 public:
  OpenConnection(Report& report, std::uint64_t id) : report_(report), id_(id) {
    traffic_ = report.opened(id);
  }
  ~OpenConnection() { report_.closed(id_); }
  OpenConnection(const OpenConnection&) = delete;
  OpenConnection& operator=(const OpenConnection&) = delete;

  [[nodiscard]] Traffic& traffic() { return *traffic_; }

 private:
  Report& report_;
  std::uint64_t id_;
  std::shared_ptr<Traffic> traffic_;
};

}  // namespace jail::egress
