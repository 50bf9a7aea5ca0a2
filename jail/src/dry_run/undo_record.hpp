// What a commit did, step by step, so that a failure midway can be rolled back and `jail undo`
// can restore the host later: for each path, a copy of what was there before (if anything),
// the mode it had (for a mode-only change), and the state the commit left.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jail/dry_run.hpp"

namespace jail::dry_run {

struct Step {
  std::size_t layer = 0;
  std::string relative;
  std::string host_path;
  std::optional<std::string> backup;  // a name in <session>/undo/backups
  std::optional<mode_t> old_mode;     // a mode-only change: restore just the mode
  HostState after;                    // what the commit left there
};

[[nodiscard]] std::string undo_dir(const Session& session);

void write_undo_record(const Session& session, const std::vector<Step>& steps);
[[nodiscard]] std::vector<Step> read_undo_record(const Session& session);

// Puts back what `steps` replaced, last step first. Returns the paths it could not restore
// (each with the reason); the backups stay in undo_dir() when any failed.
[[nodiscard]] std::vector<std::string> roll_back(const Session& session,
                                                 const std::vector<Step>& steps);

// A path's state differs from what was recorded (content, type, size, mode or mtime).
[[nodiscard]] bool differs(const HostState& recorded, const HostState& now);

// The current state of a step's path (hashed), or nullopt when its directory cannot be reached.
[[nodiscard]] std::optional<HostState> current_state(const Session& session, std::size_t layer,
                                                     const std::string& relative);

}  // namespace jail::dry_run
