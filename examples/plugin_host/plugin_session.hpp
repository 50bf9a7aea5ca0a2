// A conversation with one jailed plugin: JSON lines over its stdin/stdout, its stderr passed on
// to ours.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <jail/launch.hpp>
#include <nlohmann/json.hpp>

namespace plugin_host {

class PluginSession {
 public:
  using Clock = std::chrono::steady_clock;

  // The Process must have been launched with jail::Stdio::pipe.
  explicit PluginSession(jail::Process& process);

  // Writes one request line. False when the plugin no longer reads (it has ended).
  [[nodiscard]] bool send(const nlohmann::json& request);
  // The next answer line, or nullopt when the plugin ended, said something that is not JSON, or
  // did not answer before `deadline`. `problem` then says which.
  [[nodiscard]] std::optional<nlohmann::json> receive(Clock::time_point deadline);
  [[nodiscard]] const std::string& problem() const { return problem_; }

  // Sends the plugin end-of-file, lets it finish, and reports how the run went.
  [[nodiscard]] jail::Result finish();

 private:
  // One round: whatever the plugin wrote within `wait`.
  void pump(std::chrono::milliseconds wait);
  void read_stdout();
  void read_stderr();

  jail::Process& process_;
  std::string stdout_buffer_;
  std::string stderr_buffer_;
  bool stdout_closed_ = false;
  bool stderr_closed_ = false;
  std::string problem_;
};

}  // namespace plugin_host
