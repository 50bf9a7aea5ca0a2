// Rolling back a commit (when it fails midway, and for `jail undo`), and the undo record.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dry_run/manifest.hpp"
#include "dry_run/tree.hpp"
#include "dry_run/undo_record.hpp"
#include "jail/error.hpp"

namespace jail::dry_run {
namespace {

using nlohmann::json;

json state_json(const HostState& state) {
  return {{"exists", state.exists},     {"type", static_cast<int>(state.type)},
          {"size", state.size},         {"mode", state.mode},
          {"mtime_ns", state.mtime_ns}, {"sha256", state.sha256}};
}

HostState state_from(const json& in) {
  HostState state;
  state.exists = in.at("exists").get<bool>();
  state.type = static_cast<EntryType>(in.at("type").get<int>());
  state.size = in.at("size").get<std::uint64_t>();
  state.mode = in.at("mode").get<mode_t>();
  state.mtime_ns = in.at("mtime_ns").get<std::int64_t>();
  state.sha256 = in.at("sha256").get<std::string>();
  return state;
}

}  // namespace

std::string undo_dir(const Session& session) {
  return session.dir + "/undo";
}

bool differs(const HostState& recorded, const HostState& now) {
  if (recorded.exists != now.exists) return true;
  if (!recorded.exists) return false;
  if (recorded.type != now.type || recorded.mode != now.mode) return true;
  // A directory has no content digest: any entry added or removed moves its mtime.
  if (recorded.type == EntryType::directory) return recorded.mtime_ns != now.mtime_ns;
  if (recorded.size != now.size) return true;
  // The digest decides when there is one, so a touch (or an undo's restore) is not drift.
  if (!recorded.sha256.empty()) return recorded.sha256 != now.sha256;
  return recorded.mtime_ns != now.mtime_ns;
}

std::optional<HostState> current_state(const Session& session, std::size_t layer,
                                       const std::string& relative) {
  const UniqueFd root = open_layer_root(session.binds.at(layer).host_dir);
  if (!root.valid()) return std::nullopt;
  try {
    const Leaf leaf = open_leaf(root.get(), relative, relative);
    return state_at(leaf.parent.get(), leaf.name, true);
  } catch (const Error& error) {
    // ENOTDIR: a directory on the way is a file now — as when the tool replaced a file with a
    // directory and filled it: the path cannot exist, and the file's own change is checked.
    // A symlink on the way (ELOOP, EXDEV) stays drift.
    if (error.errno_value() == ENOENT || error.errno_value() == ENOTDIR) return HostState{};
    return std::nullopt;
  }
}

void write_undo_record(const Session& session, const std::vector<Step>& steps) {
  json doc{{"steps", json::array()}};
  for (const Step& step : steps) {
    doc["steps"].push_back({{"layer", step.layer},
                            {"path", text_json(step.relative)},
                            {"host_path", text_json(step.host_path)},
                            {"backup", step.backup ? json(*step.backup) : json()},
                            {"old_mode", step.old_mode ? json(*step.old_mode) : json()},
                            {"after", state_json(step.after)}});
  }
  const std::string path = undo_dir(session) + "/record.json";
  std::ofstream out(path, std::ios::trunc);
  out << doc.dump(2) << "\n";
  if (!out.flush()) throw Error("dry_run", EIO, fmt::format("cannot write {}", path));
}

std::vector<Step> read_undo_record(const Session& session) {
  const std::string path = undo_dir(session) + "/record.json";
  std::ifstream in(path);
  if (!in)
    throw Error("dry_run", ENOENT,
                fmt::format("session {} has no undo record ({})", session.id, path));
  try {
    std::vector<Step> steps;
    const json doc = json::parse(in);  // kept: a range-for over a member of a temporary dangles
    for (const json& entry : doc.at("steps")) {
      Step step;
      step.layer = entry.at("layer").get<std::size_t>();
      if (step.layer >= session.binds.size()) throw std::out_of_range("layer out of range");
      step.relative = text_from(entry.at("path"));
      step.host_path = text_from(entry.at("host_path"));
      if (!entry.at("backup").is_null()) step.backup = entry.at("backup").get<std::string>();
      if (!entry.at("old_mode").is_null()) step.old_mode = entry.at("old_mode").get<mode_t>();
      step.after = state_from(entry.at("after"));
      steps.push_back(std::move(step));
    }
    return steps;
  } catch (const std::exception& error) {
    throw Error("dry_run", EINVAL, fmt::format("{} is damaged: {}", path, error.what()));
  }
}

std::vector<std::string> roll_back(const Session& session, const std::vector<Step>& steps) {
  std::vector<std::string> failures;
  const std::string backups_path = undo_dir(session) + "/backups";
  const UniqueFd backups(::open(backups_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  for (auto step = steps.rbegin(); step != steps.rend(); ++step) {
    try {
      const UniqueFd root = open_layer_root_or_throw(session.binds.at(step->layer).host_dir);
      const Leaf leaf = open_leaf(root.get(), step->relative, step->host_path);
      if (step->old_mode) {
        if (::fchmodat(leaf.parent.get(), leaf.name.c_str(), *step->old_mode,
                       AT_SYMLINK_NOFOLLOW) != 0) {
          throw Error("dry_run", errno, fmt::format("chmod: {}", std::strerror(errno)));
        }
        continue;
      }
      remove_at(leaf.parent.get(), leaf.name);
      if (step->backup) restore_at(backups.get(), *step->backup, leaf.parent.get(), leaf.name);
    } catch (const std::exception& error) {
      failures.push_back(fmt::format("{}: {}", step->host_path, error.what()));
    }
  }
  return failures;
}

}  // namespace jail::dry_run
