// A root caller's layer is an overlay made in the initial namespace, where overlayfs records a
// directory rename as a redirect: an xattr on the renamed directory naming where it was, and a
// whiteout there. What the directory held stays in the host directory (the lower layer), so the
// layer alone does not hold the renamed directory's content.
//
// At the run's end each renamed directory is made whole in the layer: what it held on the host
// is copied in, and it is marked opaque. The layer then reads as "the old directory deleted, the
// new one added with all it holds", which the review, the drift checks, commit and undo handle
// as they handle any other change.
#pragma once

#include <string>
#include <vector>

namespace jail::dry_run {

struct DirRename {
  std::string from;  // relative to the bound directory
  std::string to;
};

// Makes every renamed directory below `upper` whole; `lower` is an fd of the host directory.
// Throws jail::Error. Returns the renames, outermost first.
std::vector<DirRename> flatten_dir_renames(int upper, int lower);

}  // namespace jail::dry_run
