#include "dry_run/parent_cache.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "dry_run/tree.hpp"
#include "jail/error.hpp"

namespace jail::dry_run {

int ParentCache::root(std::size_t layer) {
  auto found = roots_.find(layer);
  if (found == roots_.end()) {
    found =
        roots_.emplace(layer, open_layer_root_or_throw(session_.binds.at(layer).host_dir)).first;
  }
  return found->second.get();
}

ParentCache::Entry ParentCache::leaf(std::size_t layer, const std::string& relative,
                                     const std::string& shown) {
  const auto slash = relative.rfind('/');
  const std::string parent = slash == std::string::npos ? "" : relative.substr(0, slash);
  auto found = dirs_.find({layer, parent});
  if (found == dirs_.end()) {
    Leaf opened = open_leaf(root(layer), relative, shown);
    found = dirs_.emplace(std::make_pair(layer, parent), std::move(opened.parent)).first;
  }
  Entry entry;
  entry.parent = found->second.get();
  entry.name = slash == std::string::npos ? relative : relative.substr(slash + 1);
  if (entry.name.empty() || entry.name == "." || entry.name == "..") {
    throw Error("dry_run", EINVAL, fmt::format("refusing the path {}: not a plain name", shown));
  }
  return entry;
}

void ParentCache::forget(std::size_t layer, const std::string& relative) {
  std::erase_if(dirs_, [&](const auto& entry) {
    const auto& [key, fd] = entry;
    return key.first == layer && (key.second == relative || key.second.starts_with(relative + "/"));
  });
}

std::optional<HostState> ParentCache::state(std::size_t layer, const std::string& relative,
                                            bool hash) {
  try {
    const Entry entry = leaf(layer, relative, relative);
    return state_at(entry.parent, entry.name, hash);
  } catch (const Error& error) {
    // As current_state(): a file where a directory was on the way means the path cannot be.
    if (error.errno_value() == ENOENT || error.errno_value() == ENOTDIR) return HostState{};
    return std::nullopt;
  }
}

}  // namespace jail::dry_run
