// The root being built, written only through a directory fd: every path is resolved inside the
// root (openat2 RESOLVE_IN_ROOT), so a symlink already placed there — the host's /lib -> usr/lib,
// a tree's `lib -> /etc`, a recipe's link — means what it will mean to the tool and never leads
// a write out to the host. A directory it makes has the mode of the host directory it mirrors.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fd.hpp"

namespace jail::rootfs {

class RootDir {
 public:
  // Opens `dir`, which must be a directory and not a symlink.
  explicit RootDir(const std::filesystem::path& dir);

  // The directory at `path` (absolute in the root, or relative to it), each missing one made on
  // the way with the mode of the host's directory at the same path (0755 where the host has
  // none): a directory only its owner may enter on the host is no more open in the root. `mode`,
  // when given, is the last one's mode instead (a tree's directory: that of the one it copies).
  // Throws BuildError when a component is a file, or on any other failure.
  [[nodiscard]] Fd directory(const std::filesystem::path& path,
                             std::optional<mode_t> mode = std::nullopt) const;

  // Gives every directory made the mode it is to have. Until then each is also open to the
  // builder (u+rwx), which may have to write into a directory the host has read-only.
  void finish_directories() const;

  // The entry at `path` itself (a final symlink not followed); nullopt when absent.
  [[nodiscard]] std::optional<struct stat> entry(const std::filesystem::path& path) const;

  // A symlink at `path` with `text`, in place of a file or link there (never of a directory).
  void symlink(const std::filesystem::path& path, const std::string& text) const;

  // A new file at `path` for writing, in place of a file or link there (which is unlinked, not
  // written into: it may be a hard link to a host file).
  [[nodiscard]] Fd create(const std::filesystem::path& path, mode_t mode) const;

  // Unlinks the file or link at `path`, if there is one.
  void remove(const std::filesystem::path& path) const;

  // The open host file `host_file` hard-linked at `path`; false where the filesystem or the
  // kernel will not (another device, protected_hardlinks).
  [[nodiscard]] bool link(int host_file, const std::filesystem::path& path) const;

 private:
  // The directory holding `path`'s last name, made as directory() does, and that name.
  [[nodiscard]] std::pair<Fd, std::string> parent_of(const std::filesystem::path& path) const;
  void remove_non_directory(int parent, const std::string& name,
                            const std::filesystem::path& path) const;

  std::filesystem::path where_;  // for messages
  Fd root_;
  // Each directory made ("./usr/lib" …) with the mode finish_directories gives it.
  mutable std::vector<std::pair<std::string, mode_t>> made_;
};

}  // namespace jail::rootfs
