#include "rootfs_command.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string_view>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "jail/byte_text.hpp"
#include "rootfs/builder.hpp"
#include "rootfs/recipe.hpp"
#include "rootfs_check.hpp"
#include "subcommand_parse.hpp"

namespace jail::runner {

int run_rootfs_command(int argc, char** argv) {
  // check takes jail's run options and a command after '--', which it parses itself.
  if (argc >= 2 && std::string_view(argv[1]) == "check") {
    return rootfs_check_command(argc - 1, argv + 1);
  }
  CLI::App app{"Build a root directory holding just what a tool needs, for jail --rootfs.",
               "jail rootfs"};
  app.require_subcommand(1);
  CLI::App* build =
      app.add_subcommand("build", "copy binaries, their library closure, trees and files into OUT");
  app.add_subcommand("check",
                     "run a command in OUT and report the files it looked for that OUT lacks "
                     "(see jail rootfs check --help)");
  std::string out;
  std::vector<std::string> binaries, trees, files, libraries, recipes;
  build->add_option("OUT", out, "the root to create")->required();
  build->add_option("--binary", binaries, "a program (name on the PATH, or a path)")
      ->allow_extra_args(false);
  build->add_option("--tree", trees, "a directory copied whole")->allow_extra_args(false);
  build->add_option("--file", files, "a single file")->allow_extra_args(false);
  build->add_option("--library", libraries, "a library loaded with dlopen() (soname)")
      ->allow_extra_args(false);
  bool replace = false, copy = false;
  build->add_flag("--replace", replace,
                  "OUT may be a root built earlier: the new one takes its place (its content is "
                  "removed)");
  build->add_flag("--copy", copy,
                  "copy every file; by default host files are reflinked or hard-linked where the "
                  "filesystem allows (a hard link is the host's own file: replace files in OUT, "
                  "never write into them)");
  build
      ->add_option("--recipe", recipes,
                   "a recipe: a shipped name (python3, busybox, shell) or a .toml file")
      ->allow_extra_args(false);
  if (const auto exit = parse_subcommand(app, argc, argv)) return *exit;
  rootfs::BuildRequest request;
  request.out = out;
  request.binaries = binaries;
  for (const auto& tree : trees) request.trees.emplace_back(tree);
  for (const auto& file : files) request.files.emplace_back(file);
  request.libraries = libraries;
  request.replace = replace;
  request.share_with_host = !copy;
  try {
    for (const auto& recipe : recipes) rootfs::add_recipe(request, recipe);
    const rootfs::BuildReport report = rootfs::build_rootfs(request);
    std::printf(
        "built %s: %zu files, %zu links, %.1f MiB (%zu files shared with the host by reflink "
        "or hard link)\n",
        out.c_str(), report.files, report.links, static_cast<double>(report.bytes) / (1 << 20),
        report.shared_with_host);
    return 0;
  } catch (const rootfs::BuildError& error) {
    // It may name a tree's entry, whose name is its writer's text.
    spdlog::error("rootfs build: {}", jail::printable(error.what()));
    return 1;
  }
}

}  // namespace jail::runner
