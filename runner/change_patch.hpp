// `jail changes ID --format patch`: a dry run's change set as a patch that `git apply` applies
// to a copy of the bound directory, giving what `jail commit` would write there.
#pragma once

#include <cstdio>
#include <vector>

#include "jail/dry_run.hpp"

namespace jail::runner {

// Writes `changes` to `out` in git's patch format: "a/PATH" and "b/PATH" below the session's
// bound directory (with several binds, each path starts with its bind's host directory less the
// leading "/"), full blob ids on the index lines, text hunks of the files' raw bytes, binary
// files as zlib-deflated, base85 literals (forward and reverse, so `git apply -R` works) and
// symlinks as mode 120000. The old side of each change is the host's copy as it is now.
//
// To `notes`, a line each: what the patch cannot say ("jail: not in the patch: PATH (why)":
// modes beyond the executable bit, directories, devices, hard links) and every old side that
// changed on the host since the run. Throws jail::Error when a file cannot be read, `diff`
// cannot run, or `out` cannot be written.
void write_git_patch(const dry_run::Session& session, const std::vector<dry_run::Change>& changes,
                     std::FILE* out, std::FILE* notes);

}  // namespace jail::runner
