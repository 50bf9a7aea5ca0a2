// Dry-run sessions: what a tool run with Spec::dry_run changed, shown as data, and applied to the
// host only on an explicit commit (and taken back by undo).
//
// During the run every writable bind is an overlay: the host directory is the lower layer, a
// directory of the session is the upper one. Nothing reaches the host until commit().
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

namespace jail::dry_run {

enum class ChangeKind { added, modified, deleted, mode_changed };
enum class EntryType { file, directory, symlink, special };

// The host's state of one path, as recorded when the run began (or now, for drift checks).
struct HostState {
  bool exists = false;
  EntryType type = EntryType::file;
  std::uint64_t size = 0;
  mode_t mode = 0;  // permission bits only
  std::int64_t mtime_ns = 0;
  std::string sha256;  // files: of the content; symlinks: of the link text
};

struct Change {
  std::string host_path;  // absolute path on the host
  std::string relative;   // the same path below its bound directory ("src/main.py")
  std::size_t layer = 0;  // which bound directory (index into Session::binds)
  ChangeKind kind = ChangeKind::added;
  EntryType type = EntryType::file;  // the new entry's type; for deletions the old one's
  std::uint64_t old_size = 0;
  std::uint64_t new_size = 0;
  // The new file's bytes on disk (less than new_size for a sparse file, which a commit keeps
  // sparse): what it costs to write.
  std::uint64_t new_data = 0;
  mode_t old_mode = 0;
  mode_t new_mode = 0;
  std::string link_target;  // new symlinks
  HostState before;         // the host's state when the run began
  // An added file that is another name of a file of the layer (the tool made a hard link): that
  // file's relative path. Committed as a copy of its own.
  std::string hard_link_of;
};

struct Bind {
  std::string host_dir;  // the host directory the tool saw (the overlay's lower layer)
  std::string target;    // where the tool saw it
};

struct Session {
  std::string id;
  std::string dir;  // <sessions dir>/<id>
  std::vector<std::string> command;
  std::string spec_digest;
  std::time_t created = 0;
  // Nanoseconds past `created`: dry runs started within one second list in the order they began
  // (the id's suffix is random). 0 in a manifest written before it was kept.
  long created_ns = 0;
  std::string state;  // "pending", "committed", "undone"
  std::vector<Bind> binds;
};

// $XDG_STATE_HOME/jail/sessions, or ~/.local/state/jail/sessions.
[[nodiscard]] std::string default_sessions_dir();

// The words that name a session to `jail changes|commit|undo|discard`: its id, after
// "--session-dir DIR" when it is not in the default place (shell-quoted where it must be), so
// that a command shown in a message works when pasted.
[[nodiscard]] std::string session_words(const std::string& sessions_dir, const std::string& id);
[[nodiscard]] std::string session_words(const Session& session);

// Opens <sessions_dir>/<id>; throws jail::Error when it is not a session.
[[nodiscard]] Session open_session(const std::string& sessions_dir, const std::string& id);

struct SessionSummary {
  Session session;
  std::uint64_t size_bytes = 0;  // disk used by the session's layers
  // "pending", "committed", "undone" (session.state) once its run has finished; "running" while
  // the dry run goes on, "unfinished" when it was cut short (jail killed), "interrupted" when a
  // commit or undo of it was killed midway (recover() finishes it), "damaged" when its
  // manifest cannot be read (then only session.id and session.dir are set).
  std::string status;
};
[[nodiscard]] std::vector<SessionSummary> list_sessions(const std::string& sessions_dir);

// Whether the session is in use now: its dry run still going, or a commit, undo or discard of it.
[[nodiscard]] bool in_use(const Session& session);

// What the tool changed, in path order. Reads overlay whiteouts and opaque directories.
[[nodiscard]] std::vector<Change> changes(const Session& session);

// The path of a changed file's new content inside the session (for diffs); empty for deletions.
[[nodiscard]] std::string new_content_path(const Session& session, const Change& change);

// What a commit or undo killed midway left, finished or rolled back (recover()).
struct RecoveryReport {
  std::string kind;     // "commit" or "undo", the interrupted one
  std::string outcome;  // "rolled back" (a commit: the host is as before it) or "completed"
  std::size_t paths = 0;
};

// A digest of the whole change set as changes() reads it now: every path, its kind, type, mode,
// link target and new content (sha256), and the host state it replaces. A reviewer approves
// what `jail changes` showed by its digest; commit() with it refuses anything else.
[[nodiscard]] std::string change_set_digest(const Session& session,
                                            const std::vector<Change>& changes);

struct CommitOptions {
  std::vector<std::string> paths;  // host paths (or below them) to apply; empty: all
  bool force = false;              // apply even where the host changed since the run began
  // When set: the change_set_digest() of what was reviewed; the commit refuses (EAGAIN) when
  // the session's change set is no longer that.
  std::optional<std::string> expect_digest;
};

struct CommitReport {
  std::vector<Change> applied;
  std::optional<RecoveryReport> recovered;  // an interrupted commit or undo dealt with first
};

// Finishes or rolls back what a commit or undo killed midway left (its journal): a commit is
// rolled back, so the host is as before it and the session can be committed again; an undo is
// finished. Takes the session's lock. nullopt when there was nothing to do; jail::Error naming
// the paths it could not restore (the backups stay) or a damaged journal.
std::optional<RecoveryReport> recover(const Session& session);

// Applies the changes to the host: drift checked first (jail::Error naming every drifted path
// unless force), each file written to a temporary name and renamed into place, nothing resolved
// through a symlink or out of its bound directory. On any failure what was applied is rolled
// back, the session stays, and jail::Error says what failed. Writes the undo record.
CommitReport commit(const Session& session, const CommitOptions& options);

// What commit() would refuse as drift now, one line per path ("PATH (changed on the host
// since)"); none when the run never finished recording or the session is committed.
[[nodiscard]] std::vector<std::string> drift(const Session& session,
                                             const std::vector<Change>& changes);

// Restores what the last commit replaced, mtimes included. Refuses (jail::Error naming the paths)
// when a committed file was changed since, unless force.
void undo(const Session& session, bool force);

// Removes the session and everything in it. Refuses one with an interrupted commit or undo,
// whose backups may be the only copy of what it replaced: recover() first.
void discard(const Session& session);

// Removes <sessions_dir>/<id>, even one whose manifest is damaged; refuses one whose dry run is
// still going, or that a commit or undo is using.
void discard_session(const std::string& sessions_dir, const std::string& id);

// Whether committing `change` removes a directory of the host with everything in it: the tool
// deleted it, or put a file or a symlink in its place.
[[nodiscard]] bool removes_tree(const Change& change);

// What such a change removes with the directory: the host's entries below it now, relative to
// it, in path order (at most `limit`; `total` is set to how many there are).
[[nodiscard]] std::vector<std::string> entries_removed(const Session& session, const Change& change,
                                                       std::size_t limit, std::size_t& total);

[[nodiscard]] const char* to_string(ChangeKind kind);
[[nodiscard]] const char* to_string(EntryType type);

}  // namespace jail::dry_run
