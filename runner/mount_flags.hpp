// --bind, --ro-bind and --tmpfs as written on the command line or in a profile, made Mounts.
#pragma once

#include <string>
#include <vector>

#include "jail/spec.hpp"

namespace jail::runner {

// `path` made absolute against the current directory, without resolving symlinks (the jail's
// setup resolves them itself, inside its own root rules).
[[nodiscard]] std::string absolute_host_path(const std::string& path);
// The same without a trailing slash: "./data/" → "/home/u/p/data", to compare with other paths.
[[nodiscard]] std::string host_path_key(const std::string& path);

// "SRC[:DST]" for --bind/--ro-bind (`flag`), where `from` says where it was written ("on the
// command line", "in profile p.toml:3:1"). A ':' in a path is written "\:".
[[nodiscard]] Mount parse_bind(const std::string& text, MountKind kind, const char* flag,
                               const std::string& from);

// "DST[:SIZE]" for --tmpfs.
[[nodiscard]] Mount parse_tmpfs(const std::string& text, const std::string& from);

// --protect SUBPATH: each host path (against the current directory) that a writable bind of
// `mounts` shows is bound again on top, read-only, where that bind shows it: `--bind .
// --protect .git` keeps the history safe while the tool writes the rest. Throws UsageError when
// a path does not exist or is in no writable bind.
void add_protected(std::vector<Mount>& mounts, const std::vector<std::string>& subpaths);

// Adds a warning for each mount that a later one hides (see mount_flags.cpp); `from_profile`
// says, for each of `mounts`, whether a profile gave it.
void warn_of_hidden_mounts(const std::vector<Mount>& mounts, const std::vector<bool>& from_profile,
                           std::vector<std::string>& warnings);

}  // namespace jail::runner
