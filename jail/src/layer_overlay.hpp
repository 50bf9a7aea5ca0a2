// Parent side, for a root caller's dry run: each layer's overlay is made here, in the initial
// namespace, and the child only attaches it. overlayfs mounted there may record a directory
// rename (redirect_dir, in trusted.* xattrs); in the tool's namespace it cannot, and a rename
// fails with EXDEV. The layers are given to overlayfs as descriptors of detached trees, which
// Linux takes since 6.13; where it does not, the child makes the layers as for an unprivileged
// caller (no renames), and layer_overlays_possible() says so.
#pragma once

#include <cstdint>

#include "unique_fd.hpp"

namespace jail {

// Whether overlayfs takes its layers as descriptors here (probed once).
[[nodiscard]] bool layer_overlays_possible();

// A tmpfs of `size_bytes` for a capped dry run's layers (dry_run/layer_store.hpp), detached.
[[nodiscard]] UniqueFd make_layer_store(std::uint64_t size_bytes);

// The overlay of `lower` (a detached, idmapped tree of the host directory) with `upper` and
// `work` (directories on one mount), as a detached mount: nosuid, nodev, redirect_dir on.
// Invalid with errno set on failure.
[[nodiscard]] UniqueFd make_layer_overlay(int lower, int upper, int work);

}  // namespace jail
