// The host directories a commit works in, each opened once (as open_leaf opens them: beneath
// its bound directory, no symlink on the way): a commit of 10,000 files in 100 directories
// opened each directory's path from the bound root again for every file.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jail/dry_run.hpp"
#include "unique_fd.hpp"

namespace jail::dry_run {

class ParentCache {
 public:
  explicit ParentCache(const Session& session) : session_(session) {}

  struct Entry {
    int parent = -1;  // owned by the cache
    std::string name;
  };
  // The directory of `relative` in layer `layer` and its last name; throws jail::Error naming
  // `shown` as open_leaf does.
  [[nodiscard]] Entry leaf(std::size_t layer, const std::string& relative,
                           const std::string& shown);

  // What current_state() says (ENOENT or ENOTDIR on the way: absent; nullopt when the
  // directory cannot be reached otherwise), through the cached directories.
  [[nodiscard]] std::optional<HostState> state(std::size_t layer, const std::string& relative,
                                               bool hash);

  // Forgets the directory `relative` of layer `layer` and every one below it: the commit removed
  // it. (Fds of other directories stay valid, and a caller may hold one.)
  void forget(std::size_t layer, const std::string& relative);

 private:
  int root(std::size_t layer);
  const Session& session_;
  std::map<std::size_t, UniqueFd> roots_;
  std::map<std::pair<std::size_t, std::string>, UniqueFd> dirs_;
};

}  // namespace jail::dry_run
