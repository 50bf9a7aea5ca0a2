// The Result as one JSON object (--status-fd, --status-file): every field always present, null
// where it does not apply, so a consumer never has to guess.
#include <cstring>

#include <nlohmann/json.hpp>

#include "jail/byte_text.hpp"

#include "jail/result.hpp"

namespace jail {
namespace {

nlohmann::ordered_json violation_json(const Violation& violation) {
  nlohmann::ordered_json json = {{"syscall", violation.syscall}, {"number", violation.number},
                                 {"args", violation.args},       {"pid", violation.pid},
                                 {"action", violation.action},   {"rule", violation.rule}};
  if (!violation.target.empty()) json["target"] = violation.target;
  return json;
}

template <typename T>
nlohmann::ordered_json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json limits_json(const Limits& limits) {
  nlohmann::ordered_json rlimits = nlohmann::ordered_json::object();
  for (const auto& entry : limits.rlimits) {
    rlimits[std::string(rlimit_name(entry.resource))] = {entry.soft, entry.hard};
  }
  return {
      {"memory_bytes", optional_json(limits.memory_bytes)},
      {"pids", optional_json(limits.pids)},
      {"cpus", optional_json(limits.cpus)},
      {"timeout_ms", limits.timeout ? nlohmann::ordered_json(limits.timeout->count()) : nullptr},
      {"kill_grace_ms", limits.kill_grace.count()},
      {"cpu_time_s", limits.cpu_time ? nlohmann::ordered_json(limits.cpu_time->count()) : nullptr},
      {"max_file_size", optional_json(limits.max_file_size)},
      {"max_open_files", optional_json(limits.max_open_files)},
      {"core_dumps", limits.core_dumps},
      {"rlimits", rlimits}};
}

nlohmann::ordered_json lookups_json(const std::optional<Lookups>& lookups) {
  if (!lookups) return nullptr;
  nlohmann::ordered_json paths = nlohmann::ordered_json::array();
  for (const auto& lookup : lookups->paths) {
    paths.push_back(
        {{"path", nlohmann::ordered_json(text_json(lookup.path))},  // a tool's name: any bytes
         {"syscall", lookup.syscall},
         {"final_link", lookup.final_link == FinalLink::followed ? "followed" : "not_followed"}});
  }
  return {{"paths", paths},
          {"beyond_limit", lookups->beyond_limit},
          {"unreadable", lookups->unreadable},
          {"under_jail_mounts", lookups->under_jail_mounts}};
}

}  // namespace

std::string to_json(const Result& result) {
  nlohmann::ordered_json json;
  json["schema"] = kStatusSchema;
  json["outcome"] = to_string(result.outcome);
  json["exit_code"] =
      result.outcome == Outcome::exited ? nlohmann::ordered_json(result.exit_code) : nullptr;
  json["signal"] = result.outcome == Outcome::signaled ? result.signal : 0;
  json["jail_exit_code"] = exit_code_for(result);
  json["violation"] =
      result.violation ? violation_json(*result.violation) : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json first = nlohmann::ordered_json::array();
  for (const auto& denial : result.denials.first) first.push_back(violation_json(denial));
  json["denials"] = {{"count", result.denials.count}, {"first", first}};
  json["wall_ms"] = result.wall_ms;
  json["cpu_user_ms"] = result.cpu_user_ms;
  json["cpu_sys_ms"] = result.cpu_sys_ms;
  json["peak_memory_bytes"] = result.peak_memory_bytes;
  json["limit_hit"] = result.limit_hit ? nlohmann::ordered_json(to_string(*result.limit_hit))
                                       : nlohmann::ordered_json(nullptr);
  json["limits"] = limits_json(result.limits);
  nlohmann::ordered_json enforced = nlohmann::ordered_json::object();
  for (const auto& [limit, how] : result.limits_enforced) enforced[limit] = how;
  json["limits_enforced"] = enforced;
  json["output_truncated"] = result.output_truncated;
  json["lookups"] = lookups_json(result.lookups);
  nlohmann::ordered_json masked = nlohmann::ordered_json::array();
  for (const std::string& path : result.masked)
    masked.push_back(nlohmann::ordered_json(text_json(path)));
  json["masked"] = masked;
  json["abstract_sockets_scoped"] = result.abstract_sockets_scoped;
  json["isolation"] = result.isolation.empty() ? nlohmann::ordered_json()
                                               : nlohmann::ordered_json(result.isolation);
  nlohmann::ordered_json quotas = nlohmann::ordered_json::object();
  for (const auto& [name, value] : result.quotas) quotas[name] = value;
  json["quotas"] = quotas;
  // Spec::net_allow: every connection the tool asked the egress proxy for (empty without it).
  nlohmann::ordered_json connections = nlohmann::ordered_json::array();
  for (const NetConnection& connection : result.connections) {
    connections.push_back({{"name", text_json(connection.name)},
                           {"port", connection.port},
                           {"method", text_json(connection.method)},
                           {"allowed", connection.allowed},
                           {"address", connection.address},
                           {"reason", connection.reason},
                           {"detail", text_json(connection.detail)},
                           {"sni", text_json(connection.sni)},
                           {"bytes_out", connection.bytes_out},
                           {"bytes_in", connection.bytes_in},
                           {"open_at_end", connection.open_at_end}});
  }
  json["connections"] = connections;
  json["dry_run"] = nlohmann::ordered_json();
  if (result.dry_run) {
    const DryRunSession& session = *result.dry_run;
    // size_limit: the cap on the layers (null: none), and whether the tool's writes filled it.
    json["dry_run"] = {{"session", session.id},
                       {"dir", session.dir},
                       {"changes", session.changes},
                       {"size_limit_bytes", session.size_limit_bytes
                                                ? nlohmann::ordered_json(*session.size_limit_bytes)
                                                : nlohmann::ordered_json()},
                       {"size_limit_hit", session.size_limit_hit}};
  }
  if (result.error) {
    const char* name = strerrorname_np(result.error->errno_value);
    json["error"] = {{"step", result.error->step},
                     {"errno", result.error->errno_value},
                     {"errno_name", name != nullptr ? name : ""},
                     {"message", result.error->message}};
  } else {
    json["error"] = nullptr;
  }
  // Only with --trace-timing: [["cloned", 1.25], ...], milliseconds since launch.
  if (!result.timings.empty()) {
    nlohmann::ordered_json timings = nlohmann::ordered_json::array();
    for (const auto& phase : result.timings) timings.push_back({phase.phase, phase.ms});
    json["timings"] = timings;
  }
  return json.dump();
}

}  // namespace jail
