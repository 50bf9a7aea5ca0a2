// The Result as one JSON object (--status-fd, --status-file): every field always present, null
// where it does not apply, so a consumer never has to guess.
#include <cstring>

#include <nlohmann/json.hpp>

#include "jail/result.hpp"

namespace jail {
namespace {

nlohmann::ordered_json violation_json(const Violation& violation) {
  return {{"syscall", violation.syscall}, {"number", violation.number},
          {"args", violation.args},       {"pid", violation.pid},
          {"action", violation.action}};
}

}  // namespace

std::string to_json(const Result& result) {
  nlohmann::ordered_json json;
  json["outcome"] = to_string(result.outcome);
  json["exit_code"] = result.outcome == Outcome::exited ? nlohmann::ordered_json(result.exit_code) : nullptr;
  json["signal"] = result.outcome == Outcome::signaled ? result.signal : 0;
  json["jail_exit_code"] = exit_code_for(result);
  json["violation"] = result.violation ? violation_json(*result.violation) : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json first = nlohmann::ordered_json::array();
  for (const auto& denial : result.denials.first) first.push_back(violation_json(denial));
  json["denials"] = {{"count", result.denials.count}, {"first", first}};
  json["wall_ms"] = result.wall_ms;
  json["cpu_user_ms"] = result.cpu_user_ms;
  json["cpu_sys_ms"] = result.cpu_sys_ms;
  json["peak_memory_bytes"] = result.peak_memory_bytes;
  if (result.error) {
    const char* name = strerrorname_np(result.error->errno_value);
    json["error"] = {{"step", result.error->step},
                     {"errno", result.error->errno_value},
                     {"errno_name", name != nullptr ? name : ""},
                     {"message", result.error->message}};
  } else {
    json["error"] = nullptr;
  }
  return json.dump();
}

}  // namespace jail
