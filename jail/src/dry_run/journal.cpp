#include "dry_run/journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dry_run/manifest.hpp"
#include "dry_run/tree.hpp"
#include "dry_run/undo_record.hpp"
#include "jail/byte_text.hpp"
#include "jail/error.hpp"

namespace jail::dry_run {
namespace {

using nlohmann::json;

std::string journal_path(const std::string& session_dir) {
  return session_dir + "/undo/journal.json";
}

bool exists_at(int dir, const std::string& name) {
  struct stat info {};
  return ::fstatat(dir, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0;
}

}  // namespace

std::string temporary_name(const Session& session, const std::string& name, std::size_t index) {
  return fmt::format(".{}.jail-commit-{}-{}", name.substr(0, 100), session.id, index);
}

void write_journal(const std::string& dir, const Journal& journal) {
  json doc{{"kind", journal.kind}, {"steps", json::array()}};
  for (const JournalStep& step : journal.steps) {
    doc["steps"].push_back({{"layer", step.layer},
                            {"path", text_json(step.relative)},
                            {"host_path", text_json(step.host_path)},
                            {"before", host_state_json(step.before)},
                            {"mode_only", step.mode_only}});
  }
  write_file_atomically(dir + "/journal.json", doc.dump(1) + "\n");
  // The journal's name must last too, before the host is touched.
  const UniqueFd directory(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (directory.valid()) (void)::fsync(directory.get());
}

bool has_journal(const std::string& session_dir) {
  struct stat info {};
  return ::lstat(journal_path(session_dir).c_str(), &info) == 0;
}

std::optional<Journal> read_journal(const Session& session) {
  const std::string path = journal_path(session.dir);
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    const json doc = json::parse(in);
    Journal journal;
    journal.kind = doc.at("kind").get<std::string>();
    if (journal.kind != "commit" && journal.kind != "undo")
      throw std::invalid_argument("unknown kind " + journal.kind);
    for (const json& entry : doc.at("steps")) {
      JournalStep step;
      step.layer = entry.at("layer").get<std::size_t>();
      if (step.layer >= session.binds.size()) throw std::out_of_range("layer out of range");
      step.relative = text_from(entry.at("path"));
      step.host_path = text_from(entry.at("host_path"));
      step.before = host_state_from(entry.at("before"));
      step.mode_only = entry.at("mode_only").get<bool>();
      journal.steps.push_back(std::move(step));
    }
    return journal;
  } catch (const std::exception& error) {
    throw Error("dry_run", EINVAL,
                fmt::format("{} is damaged: {}; the backups of the interrupted commit are in {}",
                            path, error.what(), undo_dir(session) + "/backups"));
  }
}

void remove_journal(const Session& session) {
  if (::unlink(journal_path(session.dir).c_str()) != 0 && errno != ENOENT) {
    throw Error(
        "dry_run", errno,
        fmt::format("cannot remove {}: {}", journal_path(session.dir), std::strerror(errno)));
  }
}

std::vector<std::string> roll_back_journal(const Session& session, const Journal& journal) {
  std::vector<std::string> failures;
  const std::string backups_path = undo_dir(session) + "/backups";
  const UniqueFd backups(::open(backups_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  for (std::size_t i = journal.steps.size(); i-- > 0;) {
    const JournalStep& step = journal.steps[i];
    try {
      const UniqueFd root = open_layer_root_or_throw(session.binds.at(step.layer).host_dir);
      const Leaf leaf = open_leaf(root.get(), step.relative, step.host_path);
      const int parent = leaf.parent.get();
      ::unlinkat(parent, temporary_name(session, leaf.name, i).c_str(), 0);
      if (step.mode_only) {
        const HostState now = state_at(parent, leaf.name, false);
        if (now.exists && now.type == step.before.type && now.mode != step.before.mode &&
            ::fchmodat(parent, leaf.name.c_str(), step.before.mode, AT_SYMLINK_NOFOLLOW) != 0) {
          throw Error("dry_run", errno, fmt::format("chmod: {}", std::strerror(errno)));
        }
        continue;
      }
      const std::string backup = std::to_string(i);
      if (step.before.exists) {
        // Without a whole backup the commit never touched it (it copies before it writes).
        if (!backups.valid() || !exists_at(backups.get(), backup)) continue;
        remove_at(parent, leaf.name);
        restore_at(backups.get(), backup, parent, leaf.name);
      } else {
        remove_at(parent, leaf.name);
      }
    } catch (const std::exception& error) {
      failures.push_back(fmt::format("{}: {}", printable(step.host_path), error.what()));
    }
  }
  return failures;
}

std::optional<Recovery> recover_locked(const Session& session) {
  const std::optional<Journal> journal = read_journal(session);
  if (!journal) return std::nullopt;
  Manifest manifest = read_manifest(session.dir);
  Recovery recovery;
  recovery.kind = journal->kind;
  recovery.paths = journal->steps.size();
  if (journal->kind == "commit") {
    if (manifest.session.state == "committed") {
      // Killed after the commit was recorded whole: only the journal was left to remove.
      remove_journal(session);
      recovery.outcome = "completed";
      return recovery;
    }
    recovery.failed = roll_back_journal(session, *journal);
    recovery.outcome = "rolled back";
    if (recovery.failed.empty()) std::filesystem::remove_all(undo_dir(session));
    return recovery;
  }
  // An undo restores from the commit's own backups, which it removes only at its end: running it
  // again over what it already restored gives the same result.
  if (manifest.session.state != "undone") {
    recovery.failed = roll_back(session, read_undo_record(session));
    if (!recovery.failed.empty()) return recovery;
    manifest.session.state = "undone";
    write_manifest(manifest);
  }
  std::filesystem::remove_all(undo_dir(session));
  recovery.outcome = "completed";
  return recovery;
}

}  // namespace jail::dry_run
