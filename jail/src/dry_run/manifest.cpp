#include "dry_run/manifest.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dry_run/tree.hpp"
#include "jail/error.hpp"

namespace jail::dry_run {
namespace {

using nlohmann::json;

EntryType type_from(const std::string& name) {
  if (name == "directory") return EntryType::directory;
  if (name == "symlink") return EntryType::symlink;
  if (name == "special") return EntryType::special;
  return EntryType::file;
}

}  // namespace

json host_state_json(const HostState& state) {
  json out{{"exists", state.exists}};
  if (!state.exists) return out;
  out["type"] = to_string(state.type);
  out["size"] = state.size;
  out["mode"] = fmt::format("{:04o}", state.mode);
  out["mtime_ns"] = state.mtime_ns;
  if (!state.sha256.empty()) out["sha256"] = state.sha256;
  return out;
}

HostState host_state_from(const json& in) {
  HostState state;
  state.exists = in.at("exists").get<bool>();
  if (!state.exists) return state;
  state.type = type_from(in.at("type").get<std::string>());
  state.size = in.at("size").get<std::uint64_t>();
  state.mode = static_cast<mode_t>(std::stoul(in.at("mode").get<std::string>(), nullptr, 8));
  state.mtime_ns = in.at("mtime_ns").get<std::int64_t>();
  state.sha256 = in.value("sha256", "");
  return state;
}

std::string upper_dir(const Session& session, std::size_t layer) {
  return fmt::format("{}/layers/{}/upper", session.dir, layer);
}

std::string work_dir(const Session& session, std::size_t layer) {
  return fmt::format("{}/layers/{}/work", session.dir, layer);
}

Manifest read_manifest(const std::string& session_dir) {
  const std::string path = session_dir + "/" + kManifestName;
  std::ifstream in(path);
  if (!in) {
    throw Error("dry_run", errno,
                fmt::format("{} is not a dry-run session: cannot read {}: {}", session_dir, path,
                            std::strerror(errno)));
  }
  try {
    const json doc = json::parse(in);
    Manifest manifest;
    Session& session = manifest.session;
    session.dir = session_dir;
    session.id = doc.at("id").get<std::string>();
    for (const json& word : doc.at("command")) session.command.push_back(text_from(word));
    session.spec_digest = doc.at("spec_digest").get<std::string>();
    session.created = doc.at("created").get<std::time_t>();
    session.created_ns = doc.value("created_ns", 0L);
    session.state = doc.at("state").get<std::string>();
    for (const json& bind : doc.at("binds")) {
      session.binds.push_back({text_from(bind.at("host_dir")), text_from(bind.at("target"))});
    }
    manifest.finished = doc.value("finished", false);
    manifest.record_error = doc.value("record_error", "");
    for (const json& entry : doc.value("baseline", json::array())) {
      const auto layer = entry.at("layer").get<std::size_t>();
      if (layer >= session.binds.size()) throw std::out_of_range("baseline layer out of range");
      manifest.baseline[{layer, text_from(entry.at("path"))}] = host_state_from(entry.at("before"));
    }
    return manifest;
  } catch (const json::exception& error) {
    throw Error("dry_run", EINVAL, fmt::format("{} is damaged: {}", path, error.what()));
  } catch (const std::logic_error& error) {
    throw Error("dry_run", EINVAL, fmt::format("{} is damaged: {}", path, error.what()));
  }
}

void write_manifest(const Manifest& manifest) {
  const Session& session = manifest.session;
  json command = json::array();
  for (const std::string& word : session.command) command.push_back(text_json(word));
  json doc{{"version", 1},
           {"id", session.id},
           {"command", command},
           {"spec_digest", session.spec_digest},
           {"created", session.created},
           {"created_ns", session.created_ns},
           {"state", session.state},
           {"finished", manifest.finished},
           {"record_error", manifest.record_error},
           {"binds", json::array()},
           {"baseline", json::array()}};
  for (const Bind& bind : session.binds)
    doc["binds"].push_back(
        {{"host_dir", text_json(bind.host_dir)}, {"target", text_json(bind.target)}});
  for (const auto& [key, state] : manifest.baseline) {
    doc["baseline"].push_back({{"layer", key.first},
                               {"path", text_json(key.second)},
                               {"before", host_state_json(state)}});
  }
  write_file_atomically(session.dir + "/" + kManifestName, doc.dump(2) + "\n");
}

}  // namespace jail::dry_run
