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
