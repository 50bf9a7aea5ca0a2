// Builds a root directory holding just what a tool needs: its binaries, the closure of their
// shared libraries, the trees and files named, and a minimal /etc — usable by `jail --rootfs`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace jail::rootfs {

class BuildError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct BuildRequest {
  std::filesystem::path out;
  std::vector<std::string> binaries;         // names (looked up on the host's PATH) or paths
  std::vector<std::filesystem::path> trees;  // copied whole, symlinks kept
  std::vector<std::filesystem::path> files;  // single files
  std::vector<std::string> libraries;        // sonames loaded with dlopen() at run time
  std::map<std::string, std::string> links;  // path in the root → link text (applet links)
  // An OUT that is not empty is refused unless this is set and it is a root built here before
  // (it has the .jail-rootfs mark every build leaves): then the new root takes its place whole.
  bool replace = false;
  // Reflink or hard-link host files where the filesystem allows (a hard link is the host's own
  // file: edit the root by replacing files, not by writing into them); false copies every byte.
  bool share_with_host = true;
  // The loader cache that names the host's libraries (a test gives its own).
  std::filesystem::path ld_so_cache = "/etc/ld.so.cache";
};

struct BuildReport {
  std::size_t files = 0;
  std::size_t links = 0;
  std::uint64_t bytes = 0;
  std::size_t shared_with_host = 0;  // hard links or reflinks instead of copies
};

// Throws BuildError naming what is wrong (a binary that is not ELF or not found, a library the
// host does not have, an unreadable tree).
[[nodiscard]] BuildReport build_rootfs(const BuildRequest& request);

}  // namespace jail::rootfs
