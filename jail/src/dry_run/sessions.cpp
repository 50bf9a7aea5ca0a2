// Where sessions live, and listing, opening and discarding them.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "dry_run/journal.hpp"
#include "dry_run/manifest.hpp"
#include "dry_run/session_lock.hpp"
#include "dry_run/tree.hpp"
#include "jail/dry_run.hpp"
#include "jail/error.hpp"

namespace jail::dry_run {
namespace {

// An id is a name the sessions dir holds, never a path: `jail commit ../../etc` must not resolve.
void check_id(const std::string& id) {
  const bool plain =
      !id.empty() && id.size() <= 64 && std::all_of(id.begin(), id.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-';
      });
  if (!plain) {
    throw Error("dry_run", EINVAL,
                fmt::format("'{}' is not a session id (ids look like 20261129-151012-3fa2c1); "
                            "`jail sessions` lists them",
                            id));
  }
}

}  // namespace

void check_private(const std::string& dir) {
  struct stat info {};
  if (::lstat(dir.c_str(), &info) != 0) {
    throw Error("dry_run", errno, fmt::format("cannot stat {}: {}", dir, std::strerror(errno)));
  }
  const char* wrong = !S_ISDIR(info.st_mode)                 ? "is not a directory"
                      : info.st_uid != ::geteuid()           ? "belongs to another user"
                      : (info.st_mode & (S_IWGRP | S_IWOTH)) ? "is writable by others"
                                                             : nullptr;
  if (wrong != nullptr) {
    throw Error("dry_run", EPERM,
                fmt::format("{} {}: dry-run sessions must be the caller's alone (whoever can "
                            "change one chooses what `jail commit` writes); use a --session-dir "
                            "of your own, mode 0700",
                            dir, wrong));
  }
}

std::string default_sessions_dir() {
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state != nullptr && state[0] == '/') return std::string(state) + "/jail/sessions";
  const char* home = std::getenv("HOME");
  if (home == nullptr || home[0] != '/') {
    throw Error("dry_run", ENOENT,
                "neither XDG_STATE_HOME nor HOME is set to an absolute path: say where sessions "
                "live with --session-dir DIR");
  }
  return std::string(home) + "/.local/state/jail/sessions";
}

std::string session_words(const std::string& sessions_dir, const std::string& id) {
  std::string default_dir;
  try {
    default_dir = default_sessions_dir();
  } catch (const Error&) {
    // No default place: the directory is always named.
  }
  const auto normal = [](const std::string& dir) {
    return std::filesystem::path(dir).lexically_normal().string();
  };
  if (!default_dir.empty() && normal(default_dir) == normal(sessions_dir)) return id;
  const bool plain = std::all_of(sessions_dir.begin(), sessions_dir.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || std::strchr("/._-+,:@%", c);
  });
  std::string quoted = "'";
  for (char c : sessions_dir) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  return fmt::format("--session-dir {} {}", plain ? sessions_dir : quoted, id);
}

std::string session_words(const Session& session) {
  const auto slash = session.dir.rfind('/');
  return session_words(slash == 0 ? "/" : session.dir.substr(0, slash), session.id);
}

Session open_session(const std::string& sessions_dir, const std::string& id) {
  check_id(id);
  const std::string dir = sessions_dir + "/" + id;
  struct stat info {};
  if (::lstat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    throw Error("dry_run", ENOENT,
                fmt::format("no session {} in {}; `jail sessions` lists them", id, sessions_dir));
  }
  check_private(sessions_dir);
  check_private(dir);
  Manifest manifest = read_manifest(dir);
  if (manifest.session.id != id) {
    throw Error(
        "dry_run", EINVAL,
        fmt::format("{}/{} names another session ({})", dir, kManifestName, manifest.session.id));
  }
  return manifest.session;
}

std::vector<SessionSummary> list_sessions(const std::string& sessions_dir) {
  std::vector<SessionSummary> out;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(sessions_dir, error)) {
    if (!entry.is_directory(error) || entry.is_symlink(error)) continue;
    const std::string dir = entry.path().string();
    std::error_code absent;
    // A directory without a manifest is not a session, or one being created right now.
    if (!std::filesystem::is_regular_file(dir + "/" + kManifestName, absent)) continue;
    SessionSummary summary;
    try {
      const Manifest manifest = read_manifest(dir);
      summary.session = manifest.session;
      const bool busy = session_in_use(dir);
      summary.status = busy && !manifest.finished  ? "running"
                       : !busy && has_journal(dir) ? "interrupted"
                       : manifest.finished         ? manifest.session.state
                                                   : "unfinished";
    } catch (const Error&) {
      // Listed all the same: it takes space, and `jail discard` is the way to remove it.
      summary.session.id = entry.path().filename().string();
      summary.session.dir = dir;
      summary.status = "damaged";
    }
    summary.size_bytes = tree_size(dir + "/layers");
    out.push_back(std::move(summary));
  }
  std::sort(out.begin(), out.end(), [](const SessionSummary& a, const SessionSummary& b) {
    return std::tie(a.session.created, a.session.created_ns, a.session.id) <
           std::tie(b.session.created, b.session.created_ns, b.session.id);
  });
  return out;
}

UniqueFd lock_session(const Session& session) {
  UniqueFd fd(::open(session.dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid() || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    throw Error("dry_run", err,
                err == EWOULDBLOCK
                    ? fmt::format("session {} is in use: its dry run is still going, or a `jail "
                                  "commit`, `jail undo` or `jail discard` of it is running; wait "
                                  "for it to end",
                                  session.id)
                    : fmt::format("cannot {} {}: {}", fd.valid() ? "lock" : "open", session.dir,
                                  std::strerror(err)));
  }
  return fd;
}

bool session_in_use(const std::string& dir) {
  const UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  // Taken and let go at once (the fd's close drops it): only whether it could be had counts.
  return fd.valid() && ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
}

std::vector<UniqueFd> lock_targets(const Session& session) {
  std::map<std::string, bool> wanted;  // path → exclusive
  for (const Bind& bind : session.binds) {
    wanted[bind.host_dir] = true;
    for (std::filesystem::path up = std::filesystem::path(bind.host_dir).parent_path();;
         up = up.parent_path()) {
      wanted.emplace(up.string(), false);
      if (up == up.root_path()) break;
    }
  }
  std::vector<UniqueFd> held;
  for (const auto& [path, exclusive] : wanted) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) {
      if (!exclusive && (errno == EACCES || errno == EPERM)) continue;
      throw Error("dry_run", errno,
                  fmt::format("cannot open {} to lock it: {}", path, std::strerror(errno)));
    }
    while (::flock(fd.get(), exclusive ? LOCK_EX : LOCK_SH) != 0) {
      if (errno != EINTR) {
        throw Error("dry_run", errno,
                    fmt::format("cannot lock {}: {}", path, std::strerror(errno)));
      }
    }
    held.push_back(std::move(fd));
  }
  return held;
}

bool in_use(const Session& session) {
  return session_in_use(session.dir);
}

void discard(const Session& session) {
  if (has_journal(session.dir)) {
    throw Error("dry_run", EBUSY,
                fmt::format("session {} holds an interrupted commit or undo, whose backups are the "
                            "only copy of what it replaced: `jail recover {}` puts the host "
                            "back first; then discard it",
                            session.id, session_words(session)));
  }
  const auto slash = session.dir.rfind('/');
  const UniqueFd parent = open_directory(slash == 0 ? "/" : session.dir.substr(0, slash));
  remove_at(parent.get(), session.dir.substr(slash + 1));
}

void discard_session(const std::string& sessions_dir, const std::string& id) {
  check_id(id);
  const std::string dir = sessions_dir + "/" + id;
  struct stat info {};
  // A session is a directory of the caller's own with a manifest, read or not: a damaged one is
  // removed too, as nothing else in jail can get rid of it.
  if (::lstat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) ||
      ::lstat((dir + "/" + kManifestName).c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
    throw Error("dry_run", ENOENT,
                fmt::format("no session {} in {}; `jail sessions` lists them", id, sessions_dir));
  }
  check_private(sessions_dir);
  check_private(dir);
  Session session;
  session.id = id;
  session.dir = dir;
  const UniqueFd lock = lock_session(session);
  discard(session);
}

}  // namespace jail::dry_run
