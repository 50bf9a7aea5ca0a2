// One user of a session at a time: its dry run while the tool runs, then one commit, undo or
// discard. An flock on the session's directory, which the kernel drops with the last fd (a
// jail killed mid-run leaves no stale lock).
#pragma once

#include <string>

#include "jail/dry_run.hpp"
#include "unique_fd.hpp"

namespace jail::dry_run {

// Takes the session's lock, or throws jail::Error saying who holds it (EWOULDBLOCK).
[[nodiscard]] UniqueFd lock_session(const Session& session);

// Whether someone holds the lock on the session directory `dir` now.
[[nodiscard]] bool session_in_use(const std::string& dir);

}  // namespace jail::dry_run
