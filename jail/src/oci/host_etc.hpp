// Parent side: the host-minimal root's /etc entries placed inside a bundle's rootfs instead of
// bound. gVisor sets up every bind at start-up (a gofer connection, a mount: ~1 ms each here, and
// the host-minimal root has ~20 /etc entries); an entry of the rootfs costs nothing until opened.
#pragma once

#include <filesystem>

namespace jail::oci {

// Directories with more entries than this stay binds: recreating them costs more than the mount
// (/etc/ssl and /etc/alternatives hold hundreds of symlinks).
constexpr std::size_t kMaxInlinedEntries = 32;

// Places a copy of the host entry `source` at `dest` (which must not exist): a regular file, or a
// directory of at most kMaxInlinedEntries regular files, directories and symlinks, with the same
// modes and owners, its symlinks as symlinks (never followed) — dry_run::copy_at. Never a hard
// link: the bundle's rootfs is jail's to write (a later mount point over the same path is
// created there), and through a link that would write the host's /etc. Returns false, leaving
// nothing at `dest`, for anything else (a symlink, a device, a bigger directory) and on any
// failure: the caller then binds the entry.
[[nodiscard]] bool inline_host_entry(const std::filesystem::path& source,
                                     const std::filesystem::path& dest);

}  // namespace jail::oci
