// `jail rootfs check`: given the paths a tool looked up while it ran in a root (recorded by the
// jail's supervisor), which of them the root lacks — split into those the host has (what the
// recipe probably forgot) and those absent on the host too (ordinary probing).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace jail::rootfs {

// Whether the lookup went on to what a symlink at the end of the path points to, or stopped at
// the link (lstat, readlink, O_NOFOLLOW, AT_SYMLINK_NOFOLLOW): then it needs only the link.
enum class FinalLink { followed, not_followed };

struct LookedUp {
  std::string path;     // absolute, as the tool saw it inside the root
  std::string syscall;  // how: "openat", "execve", "lstat", …
  FinalLink final_link = FinalLink::followed;
};

// A recipe entry: `key = [values…]`, the key one of binaries, libraries, trees, files.
struct RecipeEntry {
  std::string key;
  std::vector<std::string> values;
};

// The entry as a TOML line, safe to print: a control or format character in a path is a \uXXXX
// escape, a byte of no UTF-8 sequence (which TOML cannot hold) a \xNN the recipe parser refuses.
[[nodiscard]] std::string to_toml(const RecipeEntry& entry);

// One host file (or directory) the root lacks, with every path the tool used for it.
struct MissingFile {
  std::filesystem::path host_path;  // on the host, symlinks resolved: what to add
  std::vector<LookedUp> looked_up_as;
  RecipeEntry recipe;      // what would add it
  std::size_t nested = 0;  // further missing paths below this directory, folded into it
  // Set when the C library does well without it (the loader cache, locale data, the time zone):
  // what it does instead. Such files are reported but do not make the check fail.
  std::string optional_because;
};

struct CheckReport {
  std::vector<MissingFile> missing;   // on the host, not in the root; by host path
  std::vector<MissingFile> optional;  // the same, but the tool does well without them
  // The same, but only root can read them on the host (not readable by "other", or in a
  // directory "other" cannot search): never suggested (no recipe entry), not counted.
  std::vector<MissingFile> root_only;
  std::vector<LookedUp> probing;  // absent on the host too; by path
  std::size_t present = 0;        // found in the root
  std::size_t provided = 0;  // under a mount the jail itself provides (/proc, /dev, /tmp, binds)
};

// The recipe entries of `files` joined by key, as one recipe must have them (TOML takes each key
// once): binaries, libraries, trees, files, each value once, in the order found.
[[nodiscard]] std::vector<RecipeEntry> merged_recipe(const std::vector<MissingFile>& files);

// Why `root` cannot be used as a root for `jail --rootfs` (missing, not a directory, no mount
// points for /proc, /dev, /tmp); nullopt when it can.
[[nodiscard]] std::optional<std::string> why_not_a_root(const std::filesystem::path& root);

// LookedUp::syscall of what interpreter_lookups finds.
inline constexpr const char* kInterpreter = "interpreter";

// What the kernel looked up itself when the tool ran the files `lookups` executed (execve,
// execveat) in `root`: the interpreter a #! line names and an ELF file's loader, and theirs in
// turn. They are no system calls of the tool, so the trace never sees them, yet a root without
// them fails the execve with ENOENT (a shell says "not found").
[[nodiscard]] std::vector<LookedUp> interpreter_lookups(const std::filesystem::path& root,
                                                        const std::vector<LookedUp>& lookups);

// Looks each path up inside `root` (symlinks resolved inside it, never out of it) and on the
// host. `jail_mounts` are the mount targets the jail adds over the root besides /proc, /dev and
// /tmp; paths below them are not the root's business.
[[nodiscard]] CheckReport check_lookups(const std::filesystem::path& root,
                                        const std::vector<LookedUp>& lookups,
                                        const std::vector<std::string>& jail_mounts);

}  // namespace jail::rootfs
