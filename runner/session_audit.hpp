// The audit trail of the write gate: each `jail commit`, `undo`, `recover` and `discard` appends
// one JSON line to --audit-log FILE (opened before anything is done, as a run's is), and
// commit, undo and recover also to the session's own history.jsonl, which lives as long as the
// session. A line says who did what to which session, the paths, and how it ended.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "jail/error.hpp"

namespace jail::runner {

class SessionAudit {
 public:
  // Opens `path` (when given) to append; throws jail::Error naming it when it cannot.
  explicit SessionAudit(const std::optional<std::string>& path);
  ~SessionAudit();
  SessionAudit(const SessionAudit&) = delete;
  SessionAudit& operator=(const SessionAudit&) = delete;

  // One line: `event` on the session in `session_dir` (its id is the directory's name), with
  // `details` (paths, digest, …), "done" or "refused" with `error`. The session's history gets
  // it too when `history` and the directory is still there.
  void record(const std::string& event, const std::string& session_dir,
              const nlohmann::json& details, const std::string& error, bool history = true);

  // Runs `action` and returns what it returns; a jail::Error it throws is recorded as the
  // refusal of `event` (with `details`) and passed on. The caller records the success itself,
  // with what the action returned.
  template <typename Action>
  decltype(auto) attempt(const std::string& event, const std::string& session_dir,
                         const nlohmann::json& details, Action&& action) {
    try {
      return action();
    } catch (const Error& error) {
      record(event, session_dir, details, error.what());
      throw;
    }
  }

  // The layout of a line, in its "schema" field.
  static constexpr int kSchema = 1;

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace jail::runner
