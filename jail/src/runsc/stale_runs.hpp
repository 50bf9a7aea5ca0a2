// Leftovers of runsc runs whose jail was killed (`kill -9`) before it could remove the run's
// directory: the bundle, runsc's state, its error log. The sandbox itself goes with jail (runsc
// run dies of its parent-death signal, and takes gVisor with it); the directory cannot.
//
// Each run holds an flock on its directory while it lives, and the kernel drops the lock when
// the process dies however it dies. The next runsc run removes the directories in the same
// parent that no process holds, named as this version names them (jail-runsc-<pid>-XXXXXX: a
// version that takes no lock names them without the pid, and is never swept), owned by the same
// user, and made over a minute ago (between mkdtemp and flock a new run's directory is briefly
// unlocked).
#pragma once

#include <filesystem>
#include <string>

#include "unique_fd.hpp"

namespace jail {

// The prefix TempDir is given for a run's directory.
[[nodiscard]] std::string runsc_run_dir_prefix();

// Takes the lock that marks `dir` as a live run's for as long as the fd is open. Throws
// jail::Error.
[[nodiscard]] UniqueFd lock_runsc_run_dir(const std::filesystem::path& dir);

// Removes the dead runs' directories in `parent` (empty: the temp directory). Best effort: what
// cannot be removed is left for the next run, and said in the debug log.
void remove_stale_runsc_run_dirs(std::filesystem::path parent);

}  // namespace jail
