// Recipes (TOML) name what a root for one kind of tool holds:
//   binaries = ["python3"]          trees = ["/usr/lib/python3.11"]
//   files = ["/etc/ssl/certs/ca-certificates.crt"]   libraries = ["libssl.so.3"]
//   [links] "/usr/bin/sh" = "busybox"
#pragma once

#include <filesystem>
#include <string>

#include "rootfs/builder.hpp"

namespace jail::rootfs {

// Adds the recipe at `name_or_path` (a .toml path, or the name of a shipped recipe) to `request`.
// Throws BuildError with file:line:col for TOML errors and unknown keys.
void add_recipe(BuildRequest& request, const std::string& name_or_path);

// Where shipped recipes live (rootfs/recipes in the source tree or the installed share dir).
[[nodiscard]] std::filesystem::path recipe_dir();

}  // namespace jail::rootfs
