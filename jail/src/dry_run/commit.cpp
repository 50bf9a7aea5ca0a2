// Applying a dry run's changes to the host, and taking them back.
//
// Order of work: check everything (the manifest recorded the change, no special files, no drift)
// before touching anything; then apply in path order (a directory before what goes in it), each
// file through a temporary name and a rename in its own directory, every path reached from the
// bound directory without following a symlink. What was there before is copied to the session's
// undo/backups first, so a failure midway rolls back and `jail undo` can restore it later.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "dry_run/journal.hpp"
#include "dry_run/manifest.hpp"
#include "dry_run/parent_cache.hpp"
#include "dry_run/session_lock.hpp"
#include "dry_run/tree.hpp"
#include "dry_run/undo_record.hpp"
#include "jail/byte_text.hpp"
#include "jail/dry_run.hpp"
#include "jail/error.hpp"

namespace jail::dry_run {
namespace fs = std::filesystem;
namespace {

// Where a commit's undo/ is made before it is renamed into place.
constexpr const char* kNewUndo = "undo.new";

bool within(const fs::path& inner, const fs::path& outer) {
  const auto [end, _] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return end == outer.end();
}

// A path asked for names the entry itself: its last name is never followed (a symlink among the
// changes is that symlink, not the file it points to), while the directories above it are
// resolved, as the session recorded the bound directory's real path. "sub/" is "sub". A path
// outside every bound directory that leads into one through a symlink (~/proj -> /srv/proj, the
// directory that was bound) is followed all the way: it names no change of its own.
std::vector<fs::path> wanted_paths(const Session& session, const std::vector<std::string>& paths) {
  const auto in_a_bind = [&](const fs::path& path) {
    return std::any_of(session.binds.begin(), session.binds.end(),
                       [&](const Bind& bind) { return within(path, bind.host_dir); });
  };
  std::vector<fs::path> wanted;
  for (const std::string& path : paths) {
    fs::path asked = fs::absolute(path).lexically_normal();
    if (asked.filename().empty() && asked != asked.root_path()) asked = asked.parent_path();
    if (asked == asked.root_path()) {
      wanted.push_back(asked);
      continue;
    }
    const fs::path entry = fs::weakly_canonical(asked.parent_path()) / asked.filename();
    const fs::path followed = fs::weakly_canonical(asked);
    wanted.push_back(!in_a_bind(entry) && in_a_bind(followed) ? followed : entry);
  }
  return wanted;
}

// The change itself or something below a path asked for, or a directory created on the way to one.
bool selected(const Change& change, const std::vector<fs::path>& wanted) {
  if (wanted.empty()) return true;
  for (const fs::path& want : wanted) {
    if (within(change.host_path, want)) return true;
    if (change.type == EntryType::directory && change.kind != ChangeKind::deleted &&
        within(want, change.host_path)) {
      return true;
    }
  }
  return false;
}

std::vector<Change> chosen_changes(const Session& session, const CommitOptions& options) {
  const std::vector<fs::path> wanted = wanted_paths(session, options.paths);
  std::vector<Change> chosen;
  for (Change& change : changes(session)) {
    if (selected(change, wanted)) chosen.push_back(std::move(change));
  }
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    const bool any = std::any_of(chosen.begin(), chosen.end(), [&](const Change& change) {
      return within(change.host_path, wanted[i]);
    });
    if (!any) {
      throw Error(
          "dry_run", ENOENT,
          fmt::format("{} is not among the changes of session {}; `jail changes {}` lists them",
                      options.paths[i], session.id, session_words(session)));
    }
  }
  return chosen;
}

void check_change_set(const Manifest& manifest, const std::vector<Change>& chosen) {
  std::vector<std::string> problems;
  for (const Change& change : chosen) {
    if (change.type == EntryType::special) {
      problems.push_back(
          fmt::format("{}: a device, fifo or socket; jail commits only files, "
                      "directories and symlinks",
                      printable(change.host_path)));
    } else if (manifest.baseline.count({change.layer, change.relative}) == 0) {
      problems.push_back(
          fmt::format("{}: not a change when the run ended (the tool left it as it was); it "
                      "differs now because the host's copy changed since, or the session was "
                      "changed on disk; commit the other paths by name",
                      printable(change.host_path)));
    }
  }
  if (!problems.empty()) {
    throw Error("dry_run", EPERM,
                fmt::format("refusing to commit session {}:\n  {}", manifest.session.id,
                            fmt::join(problems, "\n  ")));
  }
}

// A deleted directory goes with everything in it: each path below it must be as the run found
// it, and nothing may have been added there since.
void check_drift_below(const Manifest& manifest, const Change& change,
                       std::vector<std::string>& drifted) {
  const UniqueFd root = open_layer_root(manifest.session.binds.at(change.layer).host_dir);
  if (!root.valid()) return;  // the directory's own check says so
  const std::string prefix = change.relative + "/";
  auto shown = [&](const std::string& path, const char* what) {
    return fmt::format("{}/{} ({} on the host since; the commit deletes it)",
                       printable(change.host_path), printable(path.substr(prefix.size())), what);
  };
  std::set<std::string> recorded;
  for (auto it = manifest.baseline.lower_bound({change.layer, prefix});
       it != manifest.baseline.end() && it->first.first == change.layer &&
       it->first.second.starts_with(prefix);
       ++it) {
    const std::string& path = it->first.second;
    recorded.insert(path);
    // lstat only: these were recorded without digests, and a deleted tree may be large.
    try {
      const Leaf leaf = open_leaf(root.get(), path, path);
      const HostState now = state_at(leaf.parent.get(), leaf.name, false);
      if (!now.exists) continue;  // gone already: nothing is lost
      if (differs(it->second, now)) drifted.push_back(shown(path, "changed"));
    } catch (const Error&) {
      drifted.push_back(shown(path, "changed"));
    }
  }
  const UniqueFd directory = open_beneath(root.get(), change.relative, O_PATH | O_DIRECTORY);
  if (!directory.valid()) return;
  std::vector<std::string> present;
  list_tree(directory.get(), "", present);
  for (const std::string& path : present) {
    if (recorded.count(prefix + path) == 0) drifted.push_back(shown(prefix + path, "created"));
  }
}

std::vector<std::string> find_drift(const Manifest& manifest, const std::vector<Change>& chosen,
                                    ParentCache& dirs) {
  std::vector<std::string> drifted;
  for (const Change& change : chosen) {
    const auto recorded = manifest.baseline.find({change.layer, change.relative});
    if (recorded == manifest.baseline.end()) {
      drifted.push_back(fmt::format("{} (not in the session's record: its layer changed since)",
                                    printable(change.host_path)));
      continue;
    }
    const HostState& before = recorded->second;
    std::optional<HostState> now = dirs.state(change.layer, change.relative, false);
    // A file of the size and mtime recorded is taken as the file recorded (as make and rsync
    // do); otherwise its digest decides, so a touch alone is not drift.
    if (now && now->exists && now->type == EntryType::file && !before.sha256.empty()) {
      if (now->size == before.size && now->mtime_ns == before.mtime_ns) {
        now->sha256 = before.sha256;
      } else {
        now = dirs.state(change.layer, change.relative, true);
      }
    } else if (now && now->exists && now->type == EntryType::symlink) {
      now = dirs.state(change.layer, change.relative, true);
    }
    if (!now) {
      drifted.push_back(fmt::format("{} (its directory is gone or is now a symlink)",
                                    printable(change.host_path)));
    } else if (differs(before, *now)) {
      drifted.push_back(fmt::format("{} ({})", printable(change.host_path),
                                    !before.exists ? "created on the host since"
                                    : !now->exists ? "deleted on the host since"
                                                   : "changed on the host since"));
    }
  }
  for (const Change& change : chosen) {
    if (removes_tree(change)) check_drift_below(manifest, change, drifted);
  }
  return drifted;
}

void check_drift(const Manifest& manifest, const std::vector<Change>& chosen, ParentCache& dirs) {
  const std::vector<std::string> drifted = find_drift(manifest, chosen, dirs);
  if (!drifted.empty()) {
    throw Error("dry_run", EAGAIN,
                fmt::format("the host changed since session {} ran; not committing:\n  {}\n"
                            "review with `jail changes {}` and commit with --force to overwrite",
                            manifest.session.id, fmt::join(drifted, "\n  "),
                            session_words(manifest.session)));
  }
}

// A new file or link is written under this step's fixed temporary name and renamed into place;
// what was there before is copied whole to undo/backups/<index> first. The journal names every
// step before the first is applied: undo/ appears with its journal in it (made as undo.new/ and
// renamed), so a commit killed before that leaves nothing to recover.
class Applier {
 public:
  Applier(const Session& session, ParentCache& dirs)
      : session_(session), dirs_(dirs), backups_(undo_dir(session) + "/backups") {
    remove_at(open_directory(session.dir).get(), kNewUndo);  // a commit killed before its journal
    // Backups left by a commit that was killed midway are the only copy of what it replaced:
    // recover() deals with them before any other commit starts.
    // (recover() has dealt with one that left a journal; this one is older than journals.)
    if (std::error_code error; fs::exists(fs::symlink_status(undo_dir(session), error))) {
      throw Error("dry_run", EEXIST,
                  fmt::format("an earlier commit of session {} did not finish; what it replaced "
                              "is kept in {} (record.json, if there, says where each came from). "
                              "Put back what you need, remove that directory, then commit again",
                              session.id, undo_dir(session)));
    }
    const std::string fresh = session.dir + "/" + kNewUndo;
    for (const std::string& dir : {fresh, fresh + "/backups"}) {
      if (::mkdir(dir.c_str(), 0700) != 0) {
        throw Error("dry_run", errno,
                    fmt::format("cannot create {}: {}", dir, std::strerror(errno)));
      }
    }
  }

  // The intent, synced before the host is touched: each path with its state now.
  void plan(const std::vector<Change>& changes) {
    journal_.kind = "commit";
    for (const Change& change : changes) {
      JournalStep step{change.layer, change.relative, change.host_path, {}, false};
      struct stat current {};
      bool exists = false;
      // A directory the commit itself makes on the way (an added tree) is not there yet.
      if (const auto parent = parent_of(change)) {
        exists =
            ::fstatat(parent->parent, parent->name.c_str(), &current, AT_SYMLINK_NOFOLLOW) == 0;
        if (exists) step.before = state_of(current);
      }
      // A file with other names (a hard link, perhaps from outside the bound directory, as
      // package stores and `cp -al` trees make) is not chmodded in place, which would change
      // every name: the tool's copy-on-write layer broke the link, and so does the commit.
      const bool shared_file = exists && S_ISREG(current.st_mode) && current.st_nlink > 1;
      step.mode_only = change.kind == ChangeKind::mode_changed && exists &&
                       !S_ISLNK(current.st_mode) && !shared_file;
      journal_.steps.push_back(std::move(step));
    }
    const std::string fresh = session_.dir + "/" + kNewUndo;
    write_journal(fresh, journal_);
    if (::rename(fresh.c_str(), undo_dir(session_).c_str()) != 0) {
      throw Error("dry_run", errno,
                  fmt::format("cannot rename {}: {}", fresh, std::strerror(errno)));
    }
    const UniqueFd session_dir(::open(session_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (session_dir.valid()) (void)::fsync(session_dir.get());
    backups_fd_ = open_directory(backups_);
  }

  // The directory `change` is in, or nullopt where it is not there (yet); throws for anything
  // else (a symlink on the way).
  std::optional<ParentCache::Entry> parent_of(const Change& change) {
    try {
      return dirs_.leaf(change.layer, change.relative, change.host_path);
    } catch (const Error& error) {
      if (error.errno_value() == ENOENT || error.errno_value() == ENOTDIR) return std::nullopt;
      throw;
    }
  }

  int upper(std::size_t layer) {
    auto found = uppers_.find(layer);
    if (found == uppers_.end())
      found = uppers_.emplace(layer, open_directory(upper_dir(session_, layer))).first;
    return found->second.get();
  }

  void apply(std::size_t index, const Change& change) {
    const JournalStep& step = journal_.steps.at(index);
    const ParentCache::Entry leaf = dirs_.leaf(change.layer, change.relative, change.host_path);
    const int parent = leaf.parent;
    const char* name = leaf.name.c_str();
    struct stat current {};
    const bool exists = ::fstatat(parent, name, &current, AT_SYMLINK_NOFOLLOW) == 0;
    if (step.mode_only) {
      if (S_ISDIR(current.st_mode)) {
        directory_modes_.push_back(change);
      } else if (::fchmodat(parent, name, change.new_mode, AT_SYMLINK_NOFOLLOW) != 0) {
        fail("chmod", change);
      }
      return;
    }
    if (exists) keep_at(parent, leaf.name, backups_fd_.get(), std::to_string(index));

    struct stat directory {};
    ::fstat(parent, &directory);
    const struct stat* owner = exists ? &current : &directory;
    const bool replaces_other_type =
        exists && (S_ISDIR(current.st_mode) != (change.type == EntryType::directory) ||
                   change.kind == ChangeKind::deleted);
    if (replaces_other_type) {
      remove_at(parent, leaf.name);
      if (S_ISDIR(current.st_mode)) dirs_.forget(change.layer, change.relative);
    }
    if (change.kind == ChangeKind::deleted) return;
    const std::string temporary = temporary_name(session_, leaf.name, index);
    switch (change.type) {
      case EntryType::file: {
        const bool shared_file = exists && S_ISREG(current.st_mode) && current.st_nlink > 1;
        const UniqueFd content =
            change.kind == ChangeKind::mode_changed && shared_file
                ? UniqueFd(::openat(parent, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC))
                : open_beneath(upper(change.layer), change.relative, O_RDONLY);
        if (!content.valid()) fail("open the new content of", change);
        replace_file_at(parent, leaf.name, content.get(), change.new_mode, owner, temporary);
        break;
      }
      case EntryType::symlink:
        if (exists && S_ISDIR(current.st_mode)) {
          remove_at(parent, leaf.name);
          dirs_.forget(change.layer, change.relative);
        }
        replace_symlink_at(parent, leaf.name, change.link_target, temporary);
        if (::geteuid() == 0)
          ::fchownat(parent, name, owner->st_uid, owner->st_gid, AT_SYMLINK_NOFOLLOW);
        break;
      case EntryType::directory:
        if (::mkdirat(parent, name, 0700) != 0 && errno != EEXIST) fail("mkdir", change);
        if (::geteuid() == 0)
          ::fchownat(parent, name, owner->st_uid, owner->st_gid, AT_SYMLINK_NOFOLLOW);
        directory_modes_.push_back(change);  // kept writable until what goes in it is there
        break;
      case EntryType::special:
        fail("refuse the special file", change);
    }
  }

  // Directory modes last, deepest first: a directory the tool left read-only (0555) is set so
  // only once everything inside it is written, which a caller other than root needs.
  void apply_directory_modes() {
    for (auto it = directory_modes_.rbegin(); it != directory_modes_.rend(); ++it) {
      const ParentCache::Entry leaf = dirs_.leaf(it->layer, it->relative, it->host_path);
      if (::fchmodat(leaf.parent, leaf.name.c_str(), it->new_mode, AT_SYMLINK_NOFOLLOW) != 0)
        fail("chmod", *it);
    }
  }

  // One sync of each filesystem written (not one per file), then the undo record: what each
  // step replaced and what the commit left, for undo's own drift check.
  void finish() {
    for (const Bind& bind : session_.binds) {
      const UniqueFd root(::open(bind.host_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (root.valid()) (void)::syncfs(root.get());
    }
    std::vector<Step> steps;
    for (std::size_t i = 0; i < journal_.steps.size(); ++i) {
      const JournalStep& planned = journal_.steps[i];
      Step step{planned.layer, planned.relative, planned.host_path, {}, {}, {}};
      if (planned.mode_only) {
        step.old_mode = planned.before.mode;
      } else if (planned.before.exists) {
        step.backup = std::to_string(i);
      }
      // Without digests: undo's drift check then compares size, mode and mtime.
      step.after = dirs_.state(step.layer, step.relative, false).value_or(HostState{});
      steps.push_back(std::move(step));
    }
    write_undo_record(session_, steps);
  }

  [[nodiscard]] const Journal& journal() const { return journal_; }

 private:
  [[noreturn]] static void fail(const char* what, const Change& change) {
    const int err = errno;
    throw Error(
        "dry_run", err,
        fmt::format("cannot {} {}: {}", what, printable(change.host_path), std::strerror(err)));
  }

  const Session& session_;
  ParentCache& dirs_;
  std::map<std::size_t, UniqueFd> uppers_;  // each layer's upper directory, opened once
  std::string backups_;
  UniqueFd backups_fd_;
  Journal journal_;
  std::vector<Change> directory_modes_;  // in path order
};

// Deals with what a killed commit or undo left, before anything else reads the host.
std::optional<RecoveryReport> recover_first(const Session& session) {
  const std::optional<Recovery> done = recover_locked(session);
  if (!done) return std::nullopt;
  if (!done->failed.empty()) {
    throw Error(
        "dry_run", EIO,
        fmt::format("session {} held an interrupted {}; restoring failed for:\n  {}\nits "
                    "backups are kept in {}",
                    session.id, done->kind, fmt::join(done->failed, "\n  "), undo_dir(session)));
  }
  return RecoveryReport{done->kind, done->outcome, done->paths};
}

}  // namespace

std::optional<RecoveryReport> recover(const Session& session) {
  const UniqueFd lock = lock_session(session);
  const std::vector<UniqueFd> targets = lock_targets(session);
  return recover_first(session);
}

std::vector<std::string> drift(const Session& session, const std::vector<Change>& changes) {
  const Manifest manifest = read_manifest(session.dir);
  if (!manifest.finished || manifest.session.state == "committed") return {};
  ParentCache dirs(manifest.session);
  return find_drift(manifest, changes, dirs);
}

CommitReport commit(const Session& session, const CommitOptions& options) {
  const UniqueFd lock = lock_session(session);
  // Held from the drift check to the end: another commit into these trees waits, then sees
  // this one's writes as drift.
  const std::vector<UniqueFd> targets = lock_targets(session);
  CommitReport report;
  report.recovered = recover_first(session);
  Manifest manifest = read_manifest(session.dir);
  if (!manifest.finished) {
    throw Error("dry_run", EBUSY,
                manifest.record_error.empty()
                    ? fmt::format("session {}'s run was cut short before its changes were "
                                  "recorded (jail was killed); nothing to commit. `jail discard "
                                  "{}` removes it",
                                  session.id, session_words(session))
                    : fmt::format("session {}'s changes could not be recorded when its run "
                                  "ended ({}); nothing to commit. `jail discard {}` removes it",
                                  session.id, manifest.record_error, session_words(session)));
  }
  if (manifest.session.state != "pending" && manifest.session.state != "undone") {
    // A session commits once (its undo record is that commit's). After a commit of some paths
    // the others are still listed, so say how to have them too.
    const std::size_t left = changes(manifest.session).size();
    throw Error(
        "dry_run", EALREADY,
        left == 0 ? fmt::format("session {} is already committed; `jail undo {}` takes it "
                                "back",
                                session.id, session_words(session))
                  : fmt::format("session {} is already committed in part ({} change(s) "
                                "not committed are still listed by `jail changes {}`); a "
                                "session commits once: `jail undo {}`, then commit "
                                "everything wanted together",
                                session.id, left, session_words(session), session_words(session)));
  }
  if (options.expect_digest) {
    const std::string now = change_set_digest(manifest.session, changes(manifest.session));
    if (now != *options.expect_digest) {
      throw Error("dry_run", EAGAIN,
                  fmt::format("session {}'s changes are not the ones reviewed (digest {} now, "
                              "{} expected): review again with `jail changes {}`",
                              session.id, now, *options.expect_digest, session_words(session)));
    }
  }
  report.applied = chosen_changes(manifest.session, options);
  check_change_set(manifest, report.applied);
  ParentCache dirs(manifest.session);
  if (!options.force) check_drift(manifest, report.applied, dirs);

  Applier applier(manifest.session, dirs);
  applier.plan(report.applied);
  std::size_t done = 0;
  try {
    for (const Change& change : report.applied) {
      applier.apply(done, change);
      ++done;
    }
    applier.apply_directory_modes();
    applier.finish();
    manifest.session.state = "committed";
    write_manifest(manifest);
  } catch (const std::exception& error) {
    // Past the last change, what failed is setting the directories' modes (or the record).
    const std::string at =
        done < report.applied.size() ? report.applied[done].host_path : "the last step";
    const std::vector<std::string> left = roll_back_journal(manifest.session, applier.journal());
    if (left.empty()) fs::remove_all(undo_dir(manifest.session));
    throw Error(
        "dry_run", EIO,
        left.empty()
            ? fmt::format("commit of session {} failed at {}: {}; the {} change(s) already "
                          "applied were rolled back, the host is as before and the session "
                          "is kept",
                          session.id, printable(at), error.what(), done)
            : fmt::format("commit of session {} failed at {}: {}; rolling back failed for:\n  "
                          "{}\nthe previous contents are kept in {}; `jail recover {}` tries "
                          "again",
                          session.id, printable(at), error.what(), fmt::join(left, "\n  "),
                          undo_dir(manifest.session), session_words(session)));
  }
  remove_journal(manifest.session);
  return report;
}

void undo(const Session& session, bool force) {
  const UniqueFd lock = lock_session(session);
  const std::vector<UniqueFd> targets = lock_targets(session);
  if (const auto recovered = recover_first(session); recovered && recovered->kind == "undo") {
    return;  // an undo killed midway, now finished: what was asked
  }
  Manifest manifest = read_manifest(session.dir);
  if (manifest.session.state != "committed") {
    throw Error("dry_run", EINVAL,
                fmt::format("session {} is {}, not committed: there is nothing to undo", session.id,
                            manifest.session.state));
  }
  const std::vector<Step> steps = read_undo_record(manifest.session);
  if (!force) {
    std::vector<std::string> drifted;
    for (const Step& step : steps) {
      const std::optional<HostState> now =
          current_state(manifest.session, step.layer, step.relative);
      if (!now || differs(step.after, *now)) drifted.push_back(printable(step.host_path));
    }
    if (!drifted.empty()) {
      throw Error(
          "dry_run", EAGAIN,
          fmt::format("these paths changed since session {} was committed; not undoing:\n  {}\n"
                      "use --force to restore them anyway",
                      session.id, fmt::join(drifted, "\n  ")));
    }
  }
  // Named before the first restore: an undo killed midway is finished by the next command.
  write_journal(undo_dir(manifest.session), Journal{"undo", {}});
  const std::vector<std::string> left = roll_back(manifest.session, steps);
  if (!left.empty()) {
    throw Error(
        "dry_run", EIO,
        fmt::format("undo of session {} could not restore:\n  {}\nthe previous contents are "
                    "kept in {}; `jail recover {}` tries again",
                    session.id, fmt::join(left, "\n  "), undo_dir(manifest.session),
                    session_words(session)));
  }
  manifest.session.state = "undone";
  write_manifest(manifest);
  fs::remove_all(undo_dir(manifest.session));
}

}  // namespace jail::dry_run
