// Where sessions live, and listing, opening and discarding them.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "dry_run/manifest.hpp"
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
    try {
      SessionSummary summary{read_manifest(entry.path().string()).session, 0};
      summary.size_bytes = tree_size(entry.path().string() + "/layers");
      out.push_back(std::move(summary));
    } catch (const Error&) {
      // Not a session (or one being created right now): listing shows only readable ones.
    }
  }
  std::sort(out.begin(), out.end(), [](const SessionSummary& a, const SessionSummary& b) {
    return a.session.created < b.session.created ||
           (a.session.created == b.session.created && a.session.id < b.session.id);
  });
  return out;
}

void discard(const Session& session) {
  const auto slash = session.dir.rfind('/');
  const UniqueFd parent = open_directory(slash == 0 ? "/" : session.dir.substr(0, slash));
  remove_at(parent.get(), session.dir.substr(slash + 1));
}

}  // namespace jail::dry_run
