// One user of a session at a time: its dry run while the tool runs, then one commit, undo or
// discard. An flock on the session's directory, which the kernel drops with the last fd (a
// jail killed mid-run leaves no stale lock).
#pragma once

#include <string>
#include <vector>

#include "jail/dry_run.hpp"
#include "unique_fd.hpp"

namespace jail::dry_run {

// Takes the session's lock, or throws jail::Error saying who holds it (EWOULDBLOCK).
[[nodiscard]] UniqueFd lock_session(const Session& session);

// Whether someone holds the lock on the session directory `dir` now.
[[nodiscard]] bool session_in_use(const std::string& dir);

// The locks a commit or undo holds on the host directories it writes, from its drift check to
// its end: an exclusive flock on each bound directory and a shared one on each directory above
// it, so that two commits into one tree, or into trees one inside the other, run one after the
// other (the second then sees the first's writes as drift). Taken in path order, which every
// commit shares, so two never wait for each other; waits for a commit that holds one. A
// directory above that the caller cannot read is passed over.
[[nodiscard]] std::vector<UniqueFd> lock_targets(const Session& session);

}  // namespace jail::dry_run
