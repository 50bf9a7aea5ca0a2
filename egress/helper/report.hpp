// Host side: the JSON lines the helper writes to jail, one object a line, each with one write.
#pragma once

#include <cstdint>
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

class Report {
 public:
  explicit Report(int fd) : fd_(fd) {}

  void ready();
  void connection(const Decision& decision);
  void closed(std::uint64_t id, std::uint64_t bytes_out, std::uint64_t bytes_in);

 private:
  void write_line(const std::string& line);

  int fd_;
  std::mutex mutex_;  // lines of concurrent connections never interleave
};

}  // namespace jail::egress
