#include "session_commands.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "change_patch.hpp"
#include "jail/byte_text.hpp"
#include "jail/dry_run.hpp"
#include "jail/error.hpp"
#include "session_audit.hpp"
#include "subcommand_parse.hpp"
#include "units.hpp"

extern char** environ;

namespace jail::runner {
namespace {

namespace dr = jail::dry_run;

constexpr int kFailed = 1;
constexpr int kUsage = kBadInvocationExit;

std::string mode_text(mode_t mode) {
  return fmt::format("{:04o}", mode);
}

char kind_letter(dr::ChangeKind kind) {
  switch (kind) {
    case dr::ChangeKind::added:
      return 'A';
    case dr::ChangeKind::modified:
      return 'M';
    case dr::ChangeKind::deleted:
      return 'D';
    case dr::ChangeKind::mode_changed:
      return 'm';
  }
  return '?';
}

// A path as printed: the tool chose these names, and a control character in one (an escape
// sequence that moves the cursor up and erases a line) must not rewrite what the review shows.
dr::Change for_display(dr::Change change) {
  change.host_path = jail::printable(change.host_path);
  change.link_target = jail::printable(change.link_target);
  return change;
}

// A new file's size, and for a sparse one what of it is data: a 1 GiB file of holes is not
// 1 GiB written.
std::string size_text(const dr::Change& change) {
  if (change.new_data >= change.new_size) return human_size(change.new_size);
  return fmt::format("{}, sparse: {} of data", human_size(change.new_size),
                     human_size(change.new_data));
}

std::string describe(const dr::Change& change) {
  const std::string suffix = change.type == dr::EntryType::directory ? "/" : "";
  switch (change.kind) {
    case dr::ChangeKind::added:
      if (change.type == dr::EntryType::symlink)
        return fmt::format("{} -> {}", change.host_path, change.link_target);
      if (!change.hard_link_of.empty())
        return fmt::format("{} (a hard link to {})", change.host_path,
                           jail::printable(change.hard_link_of));
      if (change.type == dr::EntryType::file)
        return fmt::format("{} ({})", change.host_path, size_text(change));
      return change.host_path + suffix;
    case dr::ChangeKind::modified:
      if (change.type == dr::EntryType::symlink)
        return fmt::format("{} -> {}", change.host_path, change.link_target);
      if (change.before.type != change.type) {
        return fmt::format("{}{} ({} replaced by a {})", change.host_path, suffix,
                           to_string(change.before.type), to_string(change.type));
      }
      return fmt::format("{} ({} -> {}{})", change.host_path, human_size(change.old_size),
                         human_size(change.new_size),
                         change.old_mode != change.new_mode
                             ? fmt::format(", mode {} -> {}", mode_text(change.old_mode),
                                           mode_text(change.new_mode))
                             : "");
    case dr::ChangeKind::deleted:
      return change.type == dr::EntryType::directory
                 ? change.host_path + "/ (and what is in it, below)"
                 : fmt::format("{} ({})", change.host_path, human_size(change.old_size));
    case dr::ChangeKind::mode_changed:
      return fmt::format("{}{} (mode {} -> {})", change.host_path, suffix,
                         mode_text(change.old_mode), mode_text(change.new_mode));
  }
  return change.host_path;
}

// What a change that removes a host directory takes with it, below its line: each entry up to a
// count, then how many more. A review that showed only "dir/" hid what the commit deletes.
void print_removed(const dr::Session& session, const dr::Change& change, std::FILE* out,
                   const char* indent) {
  constexpr std::size_t kShown = 20;
  std::size_t total = 0;
  const std::vector<std::string> shown = dr::entries_removed(session, change, kShown, total);
  for (const std::string& path : shown)
    fmt::print(out, "{}- {}/{}\n", indent, for_display(change).host_path, jail::printable(path));
  if (total > shown.size()) fmt::print(out, "{}… and {} more\n", indent, total - shown.size());
  if (total == 0) fmt::print(out, "{}(it is empty)\n", indent);
}

void print_stat(const dr::Session& session, const std::vector<dr::Change>& changes,
                std::FILE* out) {
  std::size_t counts[4] = {};
  std::uint64_t added_bytes = 0, removed_bytes = 0;
  for (const dr::Change& change : changes) {
    fmt::print(out, "  {} {}\n", kind_letter(change.kind), describe(for_display(change)));
    if (dr::removes_tree(change)) print_removed(session, change, out, "      ");
    ++counts[static_cast<int>(change.kind)];
    if (change.kind != dr::ChangeKind::deleted && change.type == dr::EntryType::file)
      added_bytes += change.new_data;
    if (change.kind != dr::ChangeKind::added && change.before.type == dr::EntryType::file &&
        change.kind != dr::ChangeKind::mode_changed) {
      removed_bytes += change.old_size;
    }
  }
  fmt::print(
      out,
      "  {} added, {} modified, {} deleted, {} mode changed ({} written, {} replaced or removed)\n",
      counts[0], counts[1], counts[2], counts[3], human_size(added_bytes),
      human_size(removed_bytes));
}

bool looks_binary(const std::string& path) {
  if (path.empty()) return false;
  std::ifstream in(path, std::ios::binary);
  char buffer[8192];
  in.read(buffer, sizeof buffer);
  return std::memchr(buffer, '\0', static_cast<std::size_t>(in.gcount())) != nullptr;
}

// A unified diff by diffutils' `diff -u` (Debian: essential), run without a shell. Its lines
// are the files' own bytes, which the tool wrote: they reach the reader's terminal escaped
// (an ESC[1A ESC[2K in a file would erase the line above).
void print_text_diff(const std::string& label, const std::string& old_path,
                     const std::string& new_path) {
  std::fflush(stdout);
  const std::string a = "a/" + label, b = "b/" + label;
  std::vector<const char*> argv = {"diff",    "-u",      "--label",        a.c_str(),
                                   "--label", b.c_str(), old_path.c_str(), new_path.c_str(),
                                   nullptr};
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    fmt::print("(cannot run diff for {}: {})\n", label, std::strerror(errno));
    return;
  }
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  pid_t pid = -1;
  const int spawned =
      ::posix_spawnp(&pid, "diff", &actions, nullptr, const_cast<char**>(argv.data()), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    fmt::print("(cannot run diff for {}: install diffutils)\n", label);
    return;
  }
  std::string text;
  char buffer[1 << 16];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::fputs(printable_content(text).c_str(), stdout);
}

void print_patch(const dr::Session& session, const std::vector<dr::Change>& changes) {
  for (const dr::Change& change : changes) {
    const dr::Change display = for_display(change);
    const std::string label = display.host_path.substr(1);
    const std::string new_path = dr::new_content_path(session, change);
    const bool old_file =
        change.kind != dr::ChangeKind::added && change.before.type == dr::EntryType::file;
    const bool new_file =
        change.kind != dr::ChangeKind::deleted && change.type == dr::EntryType::file;
    if (change.kind == dr::ChangeKind::mode_changed) {
      fmt::print("mode {} {} -> {}\n", display.host_path, mode_text(change.old_mode),
                 mode_text(change.new_mode));
      continue;
    }
    if (dr::removes_tree(change)) {
      fmt::print("{} directory {}/, with what is in it:\n",
                 change.kind == dr::ChangeKind::deleted ? "deleted" : "replaced",
                 display.host_path);
      print_removed(session, change, stdout, "  ");
      if (change.kind == dr::ChangeKind::deleted) continue;
      fmt::print("by a {}\n", to_string(change.type));
    } else if (change.kind == dr::ChangeKind::modified && change.before.type != change.type) {
      fmt::print("replaced {} {} by a {}\n", to_string(change.before.type), display.host_path,
                 to_string(change.type));
    }
    if (!change.hard_link_of.empty()) {
      fmt::print("new hard link {} to {}\n", display.host_path,
                 jail::printable(change.hard_link_of));
      continue;
    }
    if (change.type == dr::EntryType::symlink && change.kind != dr::ChangeKind::deleted) {
      fmt::print("{} symlink {} -> {}\n", change.kind == dr::ChangeKind::added ? "new" : "changed",
                 display.host_path, display.link_target);
      continue;
    }
    if (!old_file && !new_file) {
      fmt::print(
          "{} {} {}\n", change.kind == dr::ChangeKind::deleted ? "deleted" : "new",
          to_string(change.kind == dr::ChangeKind::deleted ? change.before.type : change.type),
          display.host_path);
      continue;
    }
    // Each file added or deleted is named, an empty one too (diff prints nothing for it).
    if (change.kind == dr::ChangeKind::added && new_file) {
      fmt::print("new file {} ({})\n", display.host_path, size_text(change));
    } else if (change.kind == dr::ChangeKind::deleted && old_file) {
      fmt::print("deleted file {} ({})\n", display.host_path, human_size(change.old_size));
    }
    if (looks_binary(old_file ? change.host_path : "") || looks_binary(new_file ? new_path : "")) {
      fmt::print("Binary file {} {} ({} -> {})\n", display.host_path, to_string(change.kind),
                 human_size(old_file ? change.old_size : 0),
                 human_size(new_file ? change.new_size : 0));
      continue;
    }
    if (new_file && old_file && change.kind != dr::ChangeKind::added &&
        change.old_mode != change.new_mode) {
      fmt::print("mode {} {} -> {}\n", display.host_path, mode_text(change.old_mode),
                 mode_text(change.new_mode));
    }
    print_text_diff(label, old_file ? change.host_path : "/dev/null",
                    new_file ? new_path : "/dev/null");
  }
}

nlohmann::json change_json(const dr::Session& session, const dr::Change& change) {
  // A name that is not UTF-8 is {"hex": …}, as in the session's manifest: replaced by U+FFFD it
  // was another name, which `jail commit` could not be given back.
  nlohmann::json out{{"path", text_json(change.host_path)},
                     {"relative", text_json(change.relative)},
                     {"kind", to_string(change.kind)},
                     {"type", to_string(change.type)}};
  if (change.kind != dr::ChangeKind::added) {
    out["old"] = {{"type", to_string(change.before.type)},
                  {"size", change.old_size},
                  {"mode", mode_text(change.old_mode)}};
  }
  if (change.kind != dr::ChangeKind::deleted) {
    out["new"] = {{"size", change.new_size},
                  {"data_bytes", change.new_data},
                  {"mode", mode_text(change.new_mode)}};
    if (change.type == dr::EntryType::symlink)
      out["new"]["link_target"] = text_json(change.link_target);
    if (!change.hard_link_of.empty()) out["new"]["hard_link_of"] = text_json(change.hard_link_of);
  }
  if (dr::removes_tree(change)) {
    constexpr std::size_t kListed = 1000;
    std::size_t total = 0;
    nlohmann::json removed = nlohmann::json::array();
    for (const std::string& path : dr::entries_removed(session, change, kListed, total))
      removed.push_back(text_json(path));
    out["removes"] = {{"count", total}, {"first", removed}};
  }
  return out;
}

struct Common {
  std::string id;
  std::string sessions_dir;
};

void add_common(CLI::App& app, Common& common, bool needs_id) {
  if (needs_id)
    app.add_option("ID", common.id, "the session id (from the dry run, or `jail sessions`)")
        ->required();
  app.add_option("--session-dir", common.sessions_dir,
                 "where sessions live (default $XDG_STATE_HOME/jail/sessions or "
                 "~/.local/state/jail/sessions)");
}

std::string sessions_dir_of(const Common& common) {
  return common.sessions_dir.empty() ? dr::default_sessions_dir() : common.sessions_dir;
}

dr::Session open(const Common& common) {
  return dr::open_session(sessions_dir_of(common), common.id);
}

void add_audit_log(CLI::App& app, std::optional<std::string>& path) {
  app.add_option("--audit-log", path,
                 "append a JSON line saying what was done, on which paths, and how it ended");
}

nlohmann::json recovery_json(const std::optional<dr::RecoveryReport>& done) {
  if (!done) return nullptr;
  return {{"kind", done->kind}, {"outcome", done->outcome}, {"paths", done->paths}};
}

void say_recovered(const dr::Session& session, const std::optional<dr::RecoveryReport>& done) {
  if (!done) return;
  fmt::print(stderr, "jail: session {} held a {} that was interrupted ({} path(s)): {}{}\n",
             session.id, done->kind, done->paths, done->outcome,
             done->kind == "commit" ? ", the host is as before it" : "");
}

int changes_command(int argc, char** argv) {
  CLI::App app{"Show what a dry run changed (default: the review, a unified diff)", "jail changes"};
  Common common;
  bool stat = false, patch = false, json = false, digest_only = false;
  std::string format;
  add_common(app, common, true);
  app.add_option("--format", format,
                 "review (the default: a unified diff of text files, every control character "
                 "escaped, and a line for everything else), stat, json, digest, or patch (a patch "
                 "for `git apply`: the files' raw bytes, so never to a terminal)")
      ->check(CLI::IsMember({"review", "stat", "json", "digest", "patch"}));
  app.add_flag("--digest", digest_only,
               "same as --format digest: only the change set's digest, for `jail commit --expect` "
               "(stdout)");
  app.add_flag("--stat", stat, "same as --format stat: one line per changed path, then the totals");
  app.add_flag("--patch", patch,
               "same as --format review: the human review (not a patch for `git apply`)");
  app.add_flag("--json", json, "same as --format json: the changes as a JSON array");
  if (const auto exit = parse_subcommand(app, argc, argv)) return *exit;
  std::vector<std::string> formats;
  if (!format.empty()) formats.push_back(format);
  if (stat) formats.emplace_back("stat");
  if (patch) formats.emplace_back("review");
  if (json) formats.emplace_back("json");
  if (digest_only) formats.emplace_back("digest");
  std::sort(formats.begin(), formats.end());
  formats.erase(std::unique(formats.begin(), formats.end()), formats.end());
  if (formats.size() > 1) {
    spdlog::error(
        "jail changes: choose one format (--format FORMAT, or one of --stat, --patch, --json, "
        "--digest), not {}",
        fmt::join(formats, " and "));
    return kUsage;
  }
  const std::string chosen = formats.empty() ? "review" : formats.front();
  json = chosen == "json";
  stat = chosen == "stat";
  digest_only = chosen == "digest";
  const bool git_patch = chosen == "patch";
  if (git_patch && ::isatty(STDOUT_FILENO) == 1) {
    // The tool's bytes unescaped: an escape sequence in a file would reach the terminal as such.
    fmt::print(stderr,
               "jail changes --format patch: stdout is a terminal; the patch holds the files' raw "
               "bytes (escape sequences included): send it to a file (> changes.patch) or to "
               "`git apply`\n");
    return kUsage;
  }
  const dr::Session session = open(common);
  // A commit killed midway left the host half-written: put it back before comparing with it.
  if (!dr::in_use(session)) say_recovered(session, dr::recover(session));
  const std::vector<dr::Change> changes = dr::changes(session);
  const std::string digest = dr::change_set_digest(session, changes);
  if (digest_only) {
    fmt::print("{}\n", digest);
    return 0;
  }
  if (dr::in_use(session)) {
    // Read while the tool may still write: a snapshot, not to be taken for the final review.
    fmt::print(stderr,
               "jail: session {} is in use (its dry run is still going, or a commit or undo of "
               "it): these are its changes as of now (a dry run under --dry-run-size, the "
               "default, brings them here only when it ends)\n",
               session.id);
  }
  if (session.state == "committed" && !json) {
    // Changes are read against the host, which now holds them: say why the list is short.
    fmt::print(stderr,
               "jail: session {} is committed: its changes are on the host; `jail undo {}` takes "
               "them back\n",
               session.id, dr::session_words(session));
  }
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const dr::Change& change : changes) out.push_back(change_json(session, change));
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else if (stat) {
    print_stat(session, changes, stdout);
  } else if (git_patch) {
    write_git_patch(session, changes, stdout, stderr);
  } else {
    print_patch(session, changes);
  }
  std::fflush(stdout);
  fmt::print(stderr,
             "jail: change set {}: `jail commit --expect {} {}` commits exactly these changes\n",
             digest, digest, dr::session_words(session));
  return 0;
}

int commit_command(int argc, char** argv) {
  CLI::App app{"Apply a dry run's changes to the host (all, or those at or below PATHs)",
               "jail commit"};
  Common common;
  std::vector<std::string> paths;
  bool force = false;
  add_common(app, common, true);
  app.add_option("PATH", paths, "host paths to apply (default: every change)");
  app.add_flag("--force", force, "apply even where the host changed since the run began");
  std::optional<std::string> expect, audit_log;
  app.add_option("--expect", expect,
                 "the digest `jail changes` printed: refuse unless the changes are still those");
  add_audit_log(app, audit_log);
  if (const auto exit = parse_subcommand(app, argc, argv)) return *exit;
  SessionAudit audit(audit_log);
  const dr::Session session = open(common);
  const nlohmann::json asked = {{"expect", expect ? nlohmann::json(*expect) : nullptr},
                                {"force", force}};
  const dr::CommitReport report = audit.attempt("commit", session.dir, asked, [&] {
    return dr::commit(session, {paths, force, expect});
  });
  nlohmann::json applied = nlohmann::json::array();
  for (const dr::Change& change : report.applied) applied.push_back(text_json(change.host_path));
  nlohmann::json details = asked;
  details["paths"] = applied;
  details["recovered"] = recovery_json(report.recovered);
  audit.record("commit", session.dir, details, "");
  say_recovered(session, report.recovered);
  fmt::print(stderr, "jail: committed {} change(s) of session {}; `jail undo {}` takes them back\n",
             report.applied.size(), session.id, dr::session_words(session));
  return 0;
}

int undo_command(int argc, char** argv) {
  CLI::App app{"Restore what `jail commit` replaced", "jail undo"};
  Common common;
  bool force = false;
  add_common(app, common, true);
  app.add_flag("--force", force, "restore even paths changed since the commit");
  std::optional<std::string> audit_log;
  add_audit_log(app, audit_log);
  if (const auto exit = parse_subcommand(app, argc, argv)) return *exit;
  SessionAudit audit(audit_log);
  const dr::Session session = open(common);
  audit.attempt("undo", session.dir, {{"force", force}}, [&] { dr::undo(session, force); });
  audit.record("undo", session.dir, {{"force", force}}, "");
  fmt::print(stderr, "jail: undid the commit of session {}\n", session.id);
  return 0;
}

int recover_command(int argc, char** argv) {
  CLI::App app{"Finish or roll back a commit or undo that was killed midway", "jail recover"};
  Common common;
  add_common(app, common, true);
  std::optional<std::string> audit_log;
  add_audit_log(app, audit_log);
  if (const auto exit = parse_subcommand(app, argc, argv)) return *exit;
  SessionAudit audit(audit_log);
  const dr::Session session = open(common);
  const std::optional<dr::RecoveryReport> done =
      audit.attempt("recover", session.dir, {}, [&] { return dr::recover(session); });
  audit.record("recover", session.dir, {{"recovered", recovery_json(done)}}, "");
  if (!done) fmt::print(stderr, "jail: session {} has nothing to recover\n", session.id);
  say_recovered(session, done);
  return 0;
}

int discard_command(int argc, char** argv) {
  CLI::App app{"Remove a dry-run session and everything it kept", "jail discard"};
  Common common;
  add_common(app, common, true);
  std::optional<std::string> audit_log;
  add_audit_log(app, audit_log);
  if (const auto exit = parse_subcommand(app, argc, argv)) return *exit;
  SessionAudit audit(audit_log);
  const std::string dir = sessions_dir_of(common) + "/" + common.id;
  audit.attempt("discard", dir, {},
                [&] { dr::discard_session(sessions_dir_of(common), common.id); });
  audit.record("discard", dir, {}, "", false);  // its own history went with it
  return 0;
}

int sessions_command(int argc, char** argv) {
  CLI::App app{"List dry-run sessions with their age and size", "jail sessions"};
  Common common;
  bool json = false;
  add_common(app, common, false);
  app.add_flag("--json", json, "as a JSON array");
  if (const auto exit = parse_subcommand(app, argc, argv)) return *exit;
  const std::string dir = sessions_dir_of(common);
  if (std::error_code error;
      !common.sessions_dir.empty() && !std::filesystem::is_directory(dir, error)) {
    // The default place may not exist yet (no dry run so far); a directory named is a typo.
    throw Error("dry_run", ENOENT,
                fmt::format("--session-dir {}: no such directory; nothing to list", dir));
  }
  const std::time_t now = std::time(nullptr);
  nlohmann::json out = nlohmann::json::array();
  for (const dr::SessionSummary& summary : dr::list_sessions(dir)) {
    const dr::Session& s = summary.session;
    if (json) {
      nlohmann::json command = nlohmann::json::array();
      for (const std::string& word : s.command) command.push_back(text_json(word));
      out.push_back({{"id", s.id},
                     {"dir", text_json(s.dir)},
                     {"created", s.created},
                     {"state", summary.status},
                     {"size_bytes", summary.size_bytes},
                     {"command", command}});
      continue;
    }
    const auto age = static_cast<std::uint64_t>(std::max<std::time_t>(0, now - s.created));
    const std::string age_text = age < 120      ? fmt::format("{}s", age)
                                 : age < 7200   ? fmt::format("{}m", age / 60)
                                 : age < 172800 ? fmt::format("{}h", age / 3600)
                                                : fmt::format("{}d", age / 86400);
    fmt::print("{}  {:>5} ago  {:>9}  {:<9}  {}\n", s.id, age_text, human_size(summary.size_bytes),
               summary.status, jail::printable(fmt::format("{}", fmt::join(s.command, " "))));
  }
  if (json) std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return 0;
}

}  // namespace

bool is_session_command(const char* name) {
  for (const char* known : {"changes", "commit", "undo", "discard", "sessions", "recover"}) {
    if (std::strcmp(name, known) == 0) return true;
  }
  return false;
}

int run_session_command(int argc, char** argv) {
  try {
    const std::string name = argv[0];
    if (name == "changes") return changes_command(argc, argv);
    if (name == "commit") return commit_command(argc, argv);
    if (name == "undo") return undo_command(argc, argv);
    if (name == "discard") return discard_command(argc, argv);
    if (name == "recover") return recover_command(argc, argv);
    return sessions_command(argc, argv);
  } catch (const Error& error) {
    spdlog::error("{}", error.what());
    return kFailed;
  }
}

void print_dry_run_summary(const DryRunSession& session) {
  try {
    const dr::Session opened =
        dr::open_session(session.dir.substr(0, session.dir.rfind('/')), session.id);
    const std::vector<dr::Change> changes = dr::changes(opened);
    fmt::print(stderr, "jail: dry run: the host is unchanged; session {} holds {} change(s)\n",
               session.id, changes.size());
    if (!changes.empty()) print_stat(opened, changes, stderr);
    fmt::print(stderr,
               "jail: review with `jail changes {0}`, apply with `jail commit {0}`, drop with "
               "`jail discard {0}`\n",
               dr::session_words(opened));
  } catch (const Error& error) {
    spdlog::error("dry run session {}: {}", session.id, error.what());
  }
}

}  // namespace jail::runner
