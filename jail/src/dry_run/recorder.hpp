// Parent side of a dry run: makes the session before clone (one overlay layer per writable bind,
// the host's state of the bound directories), and records what changed after the run.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dry_run/manifest.hpp"
#include "jail/result.hpp"
#include "jail/spec.hpp"
#include "unique_fd.hpp"

namespace jail::dry_run {

struct Layer {
  std::string lower;  // the host directory
  // The session's directories; with a cap (Recorder::store_size), names in the store instead.
  std::string upper;
  std::string work;
};

class Recorder {
 public:
  // Throws jail::Error (a bound directory missing, the session dir not creatable or overlapping
  // a bound directory). Only MountKind::bind mounts get a layer; read-only binds stay binds.
  [[nodiscard]] static std::unique_ptr<Recorder> begin(const Spec& spec);

  // The layer for spec.mounts[index], or null when that mount is not a writable bind.
  [[nodiscard]] const Layer* layer_for_mount(std::size_t index) const;

  // With DryRun::size_bytes: the size of the tmpfs that holds every layer while the tool runs
  // (layer_store.hpp). The child makes it and sends it back, for take_store().
  [[nodiscard]] std::optional<std::uint64_t> store_size() const { return store_size_; }
  void take_store(UniqueFd store) { store_ = std::move(store); }

  // After the run: the layers copied from the store (when capped), then the changed paths and their
  // host state when the run began go into the manifest. Never throws: a failure is logged and the
  // session is still reported.
  [[nodiscard]] DryRunSession finish() noexcept;

  Recorder() = default;
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;
  // A session whose run never finished (jail could not set it up) holds nothing to review:
  // it is removed, so a failed start leaves nothing behind in the sessions directory.
  ~Recorder();

 private:
  bool finished_ = false;
  UniqueFd in_use_;
  std::optional<std::uint64_t> store_size_;
  UniqueFd store_;  // the session's lock (session_lock.hpp), for the run's length
  Manifest manifest_;
  std::map<std::size_t, Layer> layers_;  // by index into spec.mounts
  Baseline start_;                       // lstat of every entry below each bound directory
};

// The digest of what a run was asked to do (argv, env, mounts, policy, limits, …).
[[nodiscard]] std::string spec_digest(const Spec& spec);

}  // namespace jail::dry_run
