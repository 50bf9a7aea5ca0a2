// A session's manifest.json: what ran, on which directories, and for every path the tool changed
// the host's state when the run began (what `jail commit` checks for drift).
#pragma once

#include <map>
#include <string>
#include <utility>

#include "jail/dry_run.hpp"

namespace jail::dry_run {

inline constexpr const char* kManifestName = "manifest.json";

// (layer, path below the bound directory) → the host's state when the run began.
using Baseline = std::map<std::pair<std::size_t, std::string>, HostState>;

struct Manifest {
  Session session;
  Baseline baseline;
  bool finished = false;  // the run ended and `baseline` lists every changed path
};

// Both throw jail::Error naming the file. The write is atomic (temporary name, then rename).
[[nodiscard]] Manifest read_manifest(const std::string& session_dir);
void write_manifest(const Manifest& manifest);

// <session dir>/layers/<n>/upper and …/work.
[[nodiscard]] std::string upper_dir(const Session& session, std::size_t layer);
[[nodiscard]] std::string work_dir(const Session& session, std::size_t layer);

}  // namespace jail::dry_run
