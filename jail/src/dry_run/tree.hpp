// File-tree operations for dry-run sessions, all relative to a directory fd and none of them
// following a symlink: a change set written by an untrusted tool (or edited on disk since) names
// paths that must stay inside their bound directory whatever links it holds. TempDir's removal and
// the runsc bundle's copies of host /etc entries use them too, for the same reason.
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include "jail/dry_run.hpp"
#include "unique_fd.hpp"

namespace jail::dry_run {

// An O_PATH|O_DIRECTORY fd of an absolute host directory; throws jail::Error.
[[nodiscard]] UniqueFd open_directory(const std::string& path);

// An O_PATH|O_DIRECTORY fd of the host directory a dry-run layer was made of, reached with no
// symlink anywhere on the path: it was recorded canonical, so a link on the way now is the
// tree changed since (perhaps by another layer's commit) and nothing may be written through it.
// Returns an invalid fd with errno set (ELOOP for a symlink); open_layer_root_or_throw says so.
[[nodiscard]] UniqueFd open_layer_root(const std::string& host_dir);
[[nodiscard]] UniqueFd open_layer_root_or_throw(const std::string& host_dir);

// Opens `relative` below `root` with RESOLVE_BENEATH and no symlinks anywhere in the path.
// Returns an invalid fd with errno set on failure (ENOENT, ELOOP for a symlink, EXDEV).
[[nodiscard]] UniqueFd open_beneath(int root, const std::string& relative, int flags);

// The parent directory of `relative` (opened as open_beneath does) and its last component,
// which is checked to be a plain name. Throws jail::Error naming `shown` on failure.
struct Leaf {
  UniqueFd parent;
  std::string name;
};
[[nodiscard]] Leaf open_leaf(int root, const std::string& relative, const std::string& shown);

[[nodiscard]] EntryType type_of(mode_t mode);

// What `info` (an lstat) says of an entry: exists, type, size, mode, mtime; no digest.
[[nodiscard]] HostState state_of(const struct stat& info);

// lstat-like state of `name` in `dir`; exists=false when absent. With `hash`, regular files
// and symlinks get their sha256.
[[nodiscard]] HostState state_at(int dir, const std::string& name, bool hash);

[[nodiscard]] std::string read_link_at(int dir, const std::string& name);

// The names in directory `dir` (any fd of it), "." and ".." left out; throws jail::Error.
[[nodiscard]] std::vector<std::string> names_in(int dir);

// Copies the open file `from` into `to` from their starts; a sparse source stays sparse: only
// its data ranges are written (SEEK_DATA/SEEK_HOLE) and the size is set at the end, so a 1 GiB
// file of holes costs no 1 GiB of zeros. `what` names the file in errors.
void copy_bytes(int from, int to, const std::string& what);

// Removes `name` in `dir`, recursively when it is a directory; absent is fine.
void remove_at(int dir, const std::string& name);

// Copies `name` in `from` to `to_name` in `to` (files with their mode and mtime, sparse ones
// sparse; symlinks as links; directories recursively; as root also the owner). Special files
// are refused.
void copy_at(int from, const std::string& name, int to, const std::string& to_name);
// The same through "TO_NAME.partial", renamed to `to_name` once whole: a copy killed midway is
// never taken for a complete one.
void copy_whole_at(int from, const std::string& name, int to, const std::string& to_name);

// Keeps `name` in `from` as `to_name` in `to`: a file by a second hard link where the kernel
// allows one (same filesystem; a commit then renames the new content over the name, so the
// linked inode stays exactly what it was, mtime and owner included), else as copy_whole_at.
void keep_at(int from, const std::string& name, int to, const std::string& to_name);
// Puts a kept `name` back as `to_name` (absent there): a hard link again where it can, else a
// copy; the kept one stays, so doing it twice gives the same result.
void restore_at(int from, const std::string& name, int to, const std::string& to_name);

// Writes `name` in `dir` atomically: the content of `source` (an fd, read from its start) goes
// to `temporary` in the same directory, which is then renamed over `name`. `owner`: when set
// and the caller is root, the new file's uid/gid. Not synced: a commit syncs each filesystem
// once (commit.cpp).
void replace_file_at(int dir, const std::string& name, int source, mode_t mode,
                     const struct stat* owner, const std::string& temporary);
void replace_symlink_at(int dir, const std::string& name, const std::string& target,
                        const std::string& temporary);

// Writes `path` through "PATH.new", synced and renamed over it; throws jail::Error.
void write_file_atomically(const std::string& path, const std::string& text);

// The paths below `dir` (relative, "a", "a/b", …), following no symlink; appended to `out`.
void list_tree(int dir, const std::string& prefix, std::vector<std::string>& out);

// Sums the sizes of the regular files below `path` (absent: 0).
[[nodiscard]] std::uint64_t tree_size(const std::string& path);

}  // namespace jail::dry_run
