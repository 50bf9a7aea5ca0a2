#include "dry_run/recorder.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dry_run/digest.hpp"
#include "dry_run/dir_renames.hpp"
#include "dry_run/layer_modes.hpp"
#include "dry_run/layer_store.hpp"
#include "dry_run/session_lock.hpp"
#include "dry_run/tree.hpp"
#include "jail/dry_run.hpp"
#include "jail/error.hpp"
#include "log.hpp"
#include "mountinfo.hpp"
#include "setup_failure.hpp"

namespace jail::dry_run {
namespace fs = std::filesystem;
namespace {

std::string new_id() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  ::gmtime_r(&now, &parts);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &parts);
  std::random_device random;
  return fmt::format("{}-{:06x}", stamp, random() & 0xffffff);
}

void make_private_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    const int err = errno;
    throw Error("dry_run", err, fmt::format("cannot create {}: {}", path, std::strerror(err)));
  }
}

// The sessions' directory could not be used: said as that, with the way out (it surfaced as an
// internal error, or as "cannot create /x" with no word of what /x was for).
[[noreturn]] void unusable_sessions_dir(const std::string& dir, int err, const std::string& why) {
  throw Error("dry_run", err,
              fmt::format("cannot keep dry-run sessions in {}: {}; choose a directory of your "
                          "own with --session-dir DIR",
                          dir, why));
}

fs::path resolve_sessions_dir(const std::string& named) {
  const std::string dir = named.empty() ? default_sessions_dir() : named;
  std::error_code error;
  fs::path resolved = fs::weakly_canonical(dir, error);
  if (error) unusable_sessions_dir(dir, error.value(), error.message());
  return resolved;
}

void make_private_dirs(const fs::path& path) {
  fs::path partial;
  for (const fs::path& part : path) {
    partial /= part;
    if (partial == "/") continue;
    make_private_dir(partial.string());
  }
}

bool within(const fs::path& inner, const fs::path& outer) {
  const auto [end, _] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return end == outer.end();
}

// overlayfs refuses layers inside one another (ELOOP); say so before clone, with the way out.
void check_apart(const fs::path& sessions, const std::string& host_dir) {
  const fs::path lower = fs::weakly_canonical(host_dir);
  if (within(sessions, lower) || within(lower, sessions)) {
    throw Error("dry_run", ELOOP,
                fmt::format("cannot dry-run {}: the session directory {} is inside it (or it is "
                            "inside the session directory); keep sessions elsewhere with "
                            "--session-dir DIR",
                            host_dir, sessions.string()));
  }
}

// overlayfs takes a lower directory from inside the jail's user namespace only when nothing is
// mounted below it (the mounts the namespace inherited are locked to their parents), and fails
// with a bare EINVAL otherwise; say which mount is in the way, before anything is made.
void check_no_mounts_below(const std::string& host_dir, const std::string& origin,
                           const std::vector<std::string>& points) {
  for (const std::string& point : points) {
    if (point == host_dir || !within(point, host_dir)) continue;
    throw Error("dry_run", EBUSY,
                fmt::format("cannot dry-run {} ({}): {} is mounted inside it, and a dry run's "
                            "copy-on-write layer cannot cover a directory with other mounts "
                            "below it; make it --ro-bind, or bind a directory that holds no "
                            "mount point",
                            host_dir, origin, point));
  }
}

void record_tree(const std::string& root, std::size_t layer, Baseline& out) {
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(
           root, fs::directory_options::skip_permission_denied, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    const std::string relative = it->path().lexically_relative(root).string();
    try {
      out[{layer, relative}] = state_at(AT_FDCWD, it->path().string(), false);
    } catch (const Error&) {
      // Unreadable since it was listed: recorded as absent, so a commit over it sees drift.
    }
  }
}

// Two writable layers over one tree (a --bind inside the current directory, or the same directory
// bound twice) let the tool change the same files through both, and a commit would apply one
// layer through what the other made of the tree — into a symlink the tool planted there.
void check_layers_apart(const Session& session, const std::vector<std::string>& origins) {
  for (std::size_t i = 0; i < session.binds.size(); ++i) {
    for (std::size_t j = i + 1; j < session.binds.size(); ++j) {
      const fs::path a = session.binds[i].host_dir;
      const fs::path b = session.binds[j].host_dir;
      if (!within(a, b) && !within(b, a)) continue;
      throw Error("dry_run", EINVAL,
                  fmt::format("cannot dry-run {} ({}) and {} ({}) together: one is inside the "
                              "other, so the tool could change the same files through both; "
                              "make one of them --ro-bind, or bind a directory beside the other",
                              a.string(), origins[i], b.string(), origins[j]));
    }
  }
}

bool same_stat(const HostState& a, const HostState& b) {
  return a.exists == b.exists && a.type == b.type && a.size == b.size && a.mode == b.mode &&
         a.mtime_ns == b.mtime_ns;
}

}  // namespace

std::string spec_digest(const Spec& spec) {
  nlohmann::json doc{{"argv", spec.argv},
                     {"env", spec.env},
                     {"cwd", spec.cwd},
                     {"policy", spec.policy},
                     {"rootfs", spec.rootfs.value_or("")},
                     {"net", spec.net == Net::host ? "host" : "none"},
                     {"hostname", spec.hostname},
                     {"tmp_size", spec.tmp_size_bytes},
                     {"mounts", nlohmann::json::array()}};
  for (const Mount& mount : spec.mounts) {
    doc["mounts"].push_back({static_cast<int>(mount.kind), mount.source, mount.target});
  }
  // An argument that is not UTF-8 is digested with its bad bytes replaced: a digest, not a record.
  return sha256_of_text(doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::unique_ptr<Recorder> Recorder::begin(const Spec& spec) {
  auto recorder = std::make_unique<Recorder>();
  const fs::path sessions = resolve_sessions_dir(spec.dry_run->sessions_dir);
  Session& session = recorder->manifest_.session;
  session.id = new_id();
  session.dir = (sessions / session.id).string();
  session.command = spec.dry_run->command.empty() ? spec.argv : spec.dry_run->command;
  session.spec_digest = spec_digest(spec);
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  session.created = now.tv_sec;
  session.created_ns = now.tv_nsec;
  session.state = "pending";
  recorder->store_size_ = spec.dry_run->size_bytes;
  std::vector<std::string> origins;  // what asked for each layer, for messages
  std::vector<std::string> points;   // the host's mount points, read for the first layer
  bool points_read = false;
  for (std::size_t i = 0; i < spec.mounts.size(); ++i) {
    if (spec.mounts[i].kind != MountKind::bind) continue;
    const std::string host_dir = fs::weakly_canonical(spec.mounts[i].source).string();
    // The layer is the resolved directory: a link on the way is refused as a bind's is.
    fs::path as_written = fs::absolute(spec.mounts[i].source).lexically_normal();
    if (!as_written.has_filename() && as_written.has_relative_path())
      as_written = as_written.parent_path();
    if (!spec.mounts[i].follow_symlinks && host_dir != as_written.string()) {
      throw Error("dry_run", ELOOP,
                  fmt::format("cannot dry-run --bind {}: {} ({})", spec.mounts[i].source,
                              link_in_bind_source(spec.mounts[i].source), spec.mounts[i].origin));
    }
    struct stat info {};
    if (::stat(host_dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
      throw Error("dry_run", ENOTDIR,
                  fmt::format("cannot dry-run --bind {}: a dry run binds directories only ({})",
                              spec.mounts[i].source, spec.mounts[i].origin));
    }
    check_apart(sessions, host_dir);
    if (!points_read) {
      std::ifstream in("/proc/self/mountinfo");
      std::stringstream text;
      text << in.rdbuf();
      points = mount_points(text.str());
      points_read = true;
    }
    check_no_mounts_below(host_dir, spec.mounts[i].origin, points);
    const std::size_t layer = session.binds.size();
    recorder->layers_[i] =
        spec.dry_run->size_bytes
            ? Layer{host_dir, store_upper_name(layer), store_work_name(layer)}
            : Layer{host_dir, upper_dir(session, layer), work_dir(session, layer)};
    session.binds.push_back({host_dir, spec.mounts[i].target});
    origins.push_back(spec.mounts[i].origin);
  }
  check_layers_apart(session, origins);
  try {
    make_private_dirs(sessions);
  } catch (const Error& error) {
    unusable_sessions_dir(sessions.string(), error.errno_value(), error.what());
  }
  check_private(sessions.string());  // it may have been there already
  make_private_dir(session.dir);
  // Held until the run has ended and its changes are recorded: `jail discard` removed a live
  // session's layers from under the tool, and `jail sessions` showed it as pending.
  recorder->in_use_ = lock_session(session);
  // Written first without the baseline, which can take long to record: a jail killed meanwhile
  // leaves a session that `jail sessions` lists as unfinished and `jail discard` removes, not a
  // directory no command knows.
  write_manifest(recorder->manifest_);
  make_private_dir(session.dir + "/layers");
  for (std::size_t layer = 0; layer < session.binds.size(); ++layer) {
    const std::string& host_dir = session.binds[layer].host_dir;
    make_private_dir(fmt::format("{}/layers/{}", session.dir, layer));
    const std::string upper = upper_dir(session, layer);
    make_private_dir(upper);
    make_private_dir(work_dir(session, layer));
    // The merged root takes the upper root's owner and mode: make them the host directory's.
    struct stat info {};
    if (::stat(host_dir.c_str(), &info) == 0) {
      if (::geteuid() == 0) (void)::chown(upper.c_str(), info.st_uid, info.st_gid);
      (void)::chmod(upper.c_str(), info.st_mode & 07777);
    }
    record_tree(host_dir, layer, recorder->start_);
  }
  write_manifest(recorder->manifest_);
  return recorder;
}

const Layer* Recorder::layer_for_mount(std::size_t index) const {
  const auto found = layers_.find(index);
  return found == layers_.end() ? nullptr : &found->second;
}

Recorder::~Recorder() {
  in_use_ = UniqueFd();  // discard takes it
  std::error_code absent;
  if (finished_ || !fs::exists(manifest_.session.dir, absent)) return;
  try {
    discard(manifest_.session);
  } catch (const std::exception& error) {
    jail::log().error("dry run {}: cannot remove the unused session: {}", manifest_.session.id,
                      error.what());
  }
}

DryRunSession Recorder::finish() noexcept {
  finished_ = true;
  Session& session = manifest_.session;
  DryRunSession out{session.id, session.dir, 0};
  out.size_limit_bytes = store_size_;
  try {
    if (store_size_) {
      // Fail closed: without the store the tool's writes are gone, and an empty layer would
      // read as "nothing changed".
      if (!store_.valid())
        throw Error("dry_run", EIO, "the tmpfs that held the layers never reached jail");
      out.size_limit_hit = store_use(store_.get()).full;
      for (std::size_t layer = 0; layer < session.binds.size(); ++layer) {
        const UniqueFd from(::openat(store_.get(), store_upper_name(layer).c_str(),
                                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        const UniqueFd to(::open(upper_dir(session, layer).c_str(),
                                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!from.valid() || !to.valid())
          throw Error("dry_run", errno, fmt::format("cannot open layer {} to copy it", layer));
        copy_layer(from.get(), to.get());
      }
      store_ = UniqueFd();  // the last reference: the tmpfs and its memory go now
    }
    // A root caller's layers may hold directory renames (layer_overlay.hpp): made whole first.
    if (::geteuid() == 0) {
      for (std::size_t layer = 0; layer < session.binds.size(); ++layer) {
        const UniqueFd upper(::open(upper_dir(session, layer).c_str(),
                                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!upper.valid())
          throw Error("dry_run", errno, fmt::format("cannot open layer {}", layer));
        const UniqueFd lower = open_layer_root_or_throw(session.binds[layer].host_dir);
        for (const DirRename& rename : flatten_dir_renames(upper.get(), lower.get())) {
          jail::log().info("dry run: the tool renamed {}/{} to {}/{}",
                           session.binds[layer].host_dir, rename.from,
                           session.binds[layer].host_dir, rename.to);
        }
      }
    }
    for (std::size_t layer = 0; layer < session.binds.size(); ++layer)
      open_layer_for_review(session, layer);
    const std::vector<Change> changed = changes(session);
    out.changes = changed.size();
    for (const Change& change : changed) {
      const auto start = start_.find({change.layer, change.relative});
      HostState before = start == start_.end() ? HostState{} : start->second;
      if (before.exists) {
        // Hashed now, and kept only if the file is still as it was when the run began.
        const UniqueFd root = open_layer_root_or_throw(session.binds[change.layer].host_dir);
        const Leaf leaf = open_leaf(root.get(), change.relative, change.host_path);
        const HostState now = state_at(leaf.parent.get(), leaf.name, true);
        if (same_stat(now, before)) before = now;
      }
      manifest_.baseline[{change.layer, change.relative}] = before;
      if (removes_tree(change)) {
        // A commit removes the whole tree: what was in it is kept too, so that a file edited
        // or added below it on the host since is drift, not silently deleted.
        const std::string prefix = change.relative + "/";
        for (auto it = start_.lower_bound({change.layer, prefix});
             it != start_.end() && it->first.first == change.layer &&
             it->first.second.starts_with(prefix);
             ++it) {
          manifest_.baseline.emplace(it->first, it->second);
        }
      }
    }
    manifest_.finished = true;
    write_manifest(manifest_);
  } catch (const std::exception& error) {
    jail::log().error("dry run {}: cannot record the changes: {}", session.id, error.what());
    manifest_.record_error = error.what();
    try {
      write_manifest(manifest_);
    } catch (const std::exception&) {
      // The manifest as the run began stays: the session lists as unfinished.
    }
  }
  in_use_ = UniqueFd();
  return out;
}

}  // namespace jail::dry_run
