// A session's manifest.json: what ran, on which directories, and for every path the tool changed
// the host's state when the run began (what `jail commit` checks for drift).
#pragma once

#include <map>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "jail/byte_text.hpp"
#include "jail/dry_run.hpp"

namespace jail::dry_run {

inline constexpr const char* kManifestName = "manifest.json";

// (layer, path below the bound directory) → the host's state when the run began.
using Baseline = std::map<std::pair<std::size_t, std::string>, HostState>;

struct Manifest {
  Session session;
  Baseline baseline;
  bool finished = false;  // the run ended and `baseline` lists every changed path
  // The run ended, but its changes could not be recorded: why (a commit says so, and never that
  // jail was killed).
  std::string record_error;
};

// A HostState as the session's files keep it, and back (the reader throws on a malformed one).
[[nodiscard]] nlohmann::json host_state_json(const HostState& state);
[[nodiscard]] HostState host_state_from(const nlohmann::json& in);

// Both throw jail::Error naming the file. The write is atomic (temporary name, then rename).
[[nodiscard]] Manifest read_manifest(const std::string& session_dir);
void write_manifest(const Manifest& manifest);

// Throws unless `dir` is a directory (not a link) of the caller's own that no one else may
// write to. A session says which host directories a commit writes, as the caller: anyone who
// could swap one in could have root write where they choose.
void check_private(const std::string& dir);

// <session dir>/layers/<n>/upper and …/work.
[[nodiscard]] std::string upper_dir(const Session& session, std::size_t layer);
[[nodiscard]] std::string work_dir(const Session& session, std::size_t layer);

}  // namespace jail::dry_run
