// A capped dry run (DryRun::size_bytes) keeps its layers on one tmpfs of the cap's size while
// the tool runs; the kernel then refuses a write past the cap (ENOSPC), which no count of ours
// could do without racing the tool. When the run ends, each layer is copied into the session.
#pragma once

#include <cstdint>
#include <string>

namespace jail::dry_run {

// The store's name of layer N's upper and work directories (overlayfs wants both on one mount).
[[nodiscard]] std::string store_upper_name(std::size_t layer);
[[nodiscard]] std::string store_work_name(std::size_t layer);

// Copies the tree below directory `from` (a layer's upper directory in the store) into the
// empty directory `to`, entry for entry as overlayfs left it: files (sparse ones sparse; the
// names of one file as hard links), directories, symlinks, whiteouts (0/0 character devices),
// fifos and sockets, with their modes, mtimes, user.* xattrs and overlayfs's own marks. An entry
// the tool made unreadable is opened on the store's side, which is thrown away after. Throws
// jail::Error naming the entry.
void copy_layer(int from, int to);

struct StoreUse {
  std::uint64_t used_bytes = 0;
  std::uint64_t size_bytes = 0;
  bool full = false;  // less than 64 KiB or no inode left: the tool's last writes failed
};
[[nodiscard]] StoreUse store_use(int store);

}  // namespace jail::dry_run
