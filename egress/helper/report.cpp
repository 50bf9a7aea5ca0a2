// Host side: writing the report's lines with nlohmann-json.
#include "report.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace jail::egress {

namespace {

const char* reason_name(Reason reason) {
  switch (reason) {
    case Reason::not_in_allow_list:
      return "not_in_allow_list";
    case Reason::address_refused:
      return "address_refused";
    case Reason::resolve_failed:
      return "resolve_failed";
    case Reason::connect_failed:
      return "connect_failed";
    case Reason::tls_sni_mismatch:
      return "tls_sni_mismatch";
    case Reason::bad_request:
      return "bad_request";
    case Reason::too_many_connections:
      return "too_many_connections";
  }
  return "unknown";
}

// Tool-supplied text (a server name, a request target) may be any bytes: never throw on them.
std::string line_of(const nlohmann::ordered_json& object) {
  return object.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

void Report::ready() {
  write_line(line_of({{"event", "ready"}}));
}

void Report::connection(const Decision& decision) {
  nlohmann::ordered_json line = {{"event", "connection"},     {"id", decision.id},
                                 {"name", decision.name},     {"port", decision.port},
                                 {"method", decision.method}, {"allowed", !decision.refusal}};
  if (decision.refusal) {
    line["reason"] = reason_name(*decision.refusal);
    line["detail"] = decision.detail;
  }
  if (!decision.address.empty()) line["address"] = decision.address;
  if (decision.sni) line["sni"] = *decision.sni;
  write_line(line_of(line));
}

std::shared_ptr<Traffic> Report::opened(std::uint64_t id) {
  auto traffic = std::make_shared<Traffic>();
  const std::lock_guard lock(mutex_);
  open_[id] = traffic;
  return traffic;
}

namespace {

nlohmann::ordered_json closed_line(std::uint64_t id, const Traffic& traffic) {
  return {{"event", "closed"},
          {"id", id},
          {"bytes_out", traffic.bytes_out.load()},
          {"bytes_in", traffic.bytes_in.load()}};
}

}  // namespace

void Report::closed(std::uint64_t id) {
  const std::lock_guard lock(mutex_);
  const auto found = open_.find(id);
  if (found == open_.end()) return;
  send_line(line_of(closed_line(id, *found->second)));
  open_.erase(found);
}

void Report::end_of_run() {
  const std::lock_guard lock(mutex_);
  for (const auto& [id, traffic] : open_) {
    auto line = closed_line(id, *traffic);
    line["open"] = true;
    send_line(line_of(line));
  }
  open_.clear();
  ended_ = true;
}

void Report::write_line(const std::string& line) {
  const std::lock_guard lock(mutex_);
  send_line(line);
}

void Report::send_line(const std::string& line) {
  if (ended_) return;
  // One send: jail reads whole lines. A jail that is gone ends the helper (main's loop).
  (void)send(fd_, line.data(), line.size(), MSG_NOSIGNAL);
}

}  // namespace jail::egress
