// Finds the file the dynamic loader would load for a soname, the way ld.so searches: DT_RPATH
// (of the object and its loaders, when it has no DT_RUNPATH), DT_RUNPATH, the host's
// ld.so.cache, then the default directories. $ORIGIN is the directory of the object.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rootfs/elf.hpp"

namespace jail::rootfs {

class LibraryResolver {
 public:
  // Reads the cache at `ld_so_cache` if present (a missing or unreadable cache is not an error:
  // the default directories still apply).
  explicit LibraryResolver(const std::filesystem::path& ld_so_cache = "/etc/ld.so.cache");

  [[nodiscard]] std::optional<std::filesystem::path> find(
      const std::string& soname, const std::filesystem::path& object, const ElfInfo& info,
      const std::vector<std::string>& inherited_rpath) const;

  [[nodiscard]] std::size_t cache_entries() const { return cache_.size(); }

 private:
  std::map<std::string, std::filesystem::path> cache_;  // soname → path, x86-64 entries only
};

// One of the directories ld.so searches when nothing else named the library (x86-64 Debian).
[[nodiscard]] bool is_default_library_dir(const std::filesystem::path& dir);

// "$ORIGIN/../lib" with origin "/opt/x/bin" → "/opt/x/bin/../lib".
[[nodiscard]] std::string expand_origin(const std::string& entry,
                                        const std::filesystem::path& origin);

}  // namespace jail::rootfs
