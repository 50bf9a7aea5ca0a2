// A commit's or an undo's intent, written and synced in the session's undo/ before either touches
// the host, so that one killed at any point (SIGKILL, OOM) is finished or rolled back by the next
// command on the session (`jail recover`, or commit, undo, changes) and never leaves the host
// half-written with the originals' only copies unnamed. Power loss is out of scope: nothing is
// synced per file; each filesystem a commit wrote is synced once before it is marked done.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "jail/dry_run.hpp"

namespace jail::dry_run {

struct JournalStep {
  std::size_t layer = 0;
  std::string relative;
  std::string host_path;
  // As the commit found it. A step whose entry existed keeps a copy as undo/backups/<index>
  // (renamed there once whole) before the host's is touched; one that did not exist is removed
  // on rollback.
  HostState before;
  bool mode_only = false;  // only the mode changes: rollback restores before.mode
};

struct Journal {
  std::string kind;  // "commit": roll back what was applied; "undo": finish restoring
  std::vector<JournalStep> steps;
};

// DIR/journal.json (DIR: the session's undo/, or the directory that becomes it), written
// atomically and synced.
void write_journal(const std::string& dir, const Journal& journal);
[[nodiscard]] std::optional<Journal> read_journal(const Session& session);
[[nodiscard]] bool has_journal(const std::string& session_dir);
void remove_journal(const Session& session);

// The name a step's new content is written under beside its target before the rename: fixed,
// so that recovery removes one a killed commit left.
[[nodiscard]] std::string temporary_name(const Session& session, const std::string& name,
                                         std::size_t index);

// Puts the host back as the journal's commit found it: for each step, last first, removes a
// temporary it left, then restores the backup, the mode, or removes what the commit created.
// Steps it never reached are left alone. Returns the paths it could not restore, with why.
[[nodiscard]] std::vector<std::string> roll_back_journal(const Session& session,
                                                         const Journal& journal);

struct Recovery {
  std::string kind;                 // the journal's
  std::string outcome;              // "rolled back", "completed"
  std::size_t paths = 0;            // how many the journal named
  std::vector<std::string> failed;  // paths not restored (their backups are kept)
};

// With the session's lock held: finishes or rolls back what a killed commit or undo left.
// nullopt when there was nothing to do. Throws jail::Error when the journal is damaged.
[[nodiscard]] std::optional<Recovery> recover_locked(const Session& session);

}  // namespace jail::dry_run
