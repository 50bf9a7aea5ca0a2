// The root being built, written only through a directory fd: every path is resolved inside the
// root (openat2 RESOLVE_IN_ROOT), so a symlink already placed there — the host's /lib -> usr/lib,
// a tree's `lib -> /etc`, a recipe's link — means what it will mean to the tool and never leads
// a write out to the host.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "fd.hpp"

namespace jail::rootfs {

class RootDir {
 public:
  // Opens `dir`, which must be a directory and not a symlink.
  explicit RootDir(const std::filesystem::path& dir);

  // The directory at `path` (absolute in the root, or relative to it), each missing one made
  // 0755 on the way. Throws BuildError when a component is a file, or on any other failure.
  [[nodiscard]] Fd directory(const std::filesystem::path& path) const;

  // The entry at `path` itself (a final symlink not followed); nullopt when absent.
  [[nodiscard]] std::optional<struct stat> entry(const std::filesystem::path& path) const;

  // A symlink at `path` with `text`, in place of a file or link there (never of a directory).
  void symlink(const std::filesystem::path& path, const std::string& text) const;

  // A new file at `path` for writing, in place of a file or link there (which is unlinked, not
  // written into: it may be a hard link to a host file).
  [[nodiscard]] Fd create(const std::filesystem::path& path, mode_t mode) const;

  // Unlinks the file or link at `path`, if there is one.
  void remove(const std::filesystem::path& path) const;

  // `host_file` hard-linked at `path`; false where the filesystem will not (another device).
  [[nodiscard]] bool link(const std::filesystem::path& host_file,
                          const std::filesystem::path& path) const;

 private:
  // The directory holding `path`'s last name, made as directory() does, and that name.
  [[nodiscard]] std::pair<Fd, std::string> parent_of(const std::filesystem::path& path) const;
  void remove_non_directory(int parent, const std::string& name,
                            const std::filesystem::path& path) const;

  std::filesystem::path where_;  // for messages
  Fd root_;
};

}  // namespace jail::rootfs
