// What the dynamic loader will need to run an ELF file, read from the file itself (never by
// running it, as ldd does).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace jail::rootfs {

struct ElfInfo {
  std::string interpreter;           // PT_INTERP, empty for a static binary
  std::vector<std::string> needed;   // DT_NEEDED sonames, in order
  std::vector<std::string> rpath;    // DT_RPATH entries (used only when there is no RUNPATH)
  std::vector<std::string> runpath;  // DT_RUNPATH entries
};

// nullopt when the file is not an ELF object; throws std::runtime_error when it is one this
// builder cannot read (truncated, another architecture), naming the file.
// Reads the headers and strings the loader uses (a few KiB), never the whole file.
[[nodiscard]] std::optional<ElfInfo> read_elf(const std::filesystem::path& file);
// The same from an open file; `file` names it in errors.
[[nodiscard]] std::optional<ElfInfo> read_elf(int fd, const std::filesystem::path& file);

}  // namespace jail::rootfs
