#include "export_command.hpp"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "jail/error.hpp"
#include "jail/oci.hpp"
#include "run_options.hpp"

namespace jail::runner {

int export_oci_command(const std::vector<std::string>& options,
                       const std::vector<std::string>& command) {
  constexpr int kFailed = 125;
  // --bundle is this subcommand's own; everything else is a run option.
  std::vector<std::string> run_options;
  std::string bundle;
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (options[i] == "--bundle" && i + 1 < options.size()) {
      bundle = options[++i];
    } else if (options[i].starts_with("--bundle=")) {
      bundle = options[i].substr(9);
    } else {
      run_options.push_back(options[i]);
    }
  }
  try {
    RunOptions run = parse_run_options(run_options, command);  // --help is answered here
    if (bundle.empty()) {
      spdlog::error("export-oci: --bundle DIR is required (where config.json and rootfs/ go)");
      return kFailed;
    }
    // A bundle has no terminal relay: the runtime owns the tool's stdio.
    run.spec.stdio = Stdio::inherit;
    export_oci_bundle(run.spec, std::filesystem::absolute(bundle).string());
  } catch (const HelpRequested& help) {
    std::fputs(
        "Usage: jail export-oci --bundle DIR [run options] -- COMMAND...\n"
        "Writes the run as an OCI bundle (config.json and rootfs/) in DIR, a new or empty "
        "directory.\n\n",
        stdout);
    std::fputs(help.text.c_str(), stdout);
    return 0;
  } catch (const std::exception& error) {
    spdlog::error("export-oci: {}", error.what());
    return kFailed;
  }
  spdlog::info("wrote the OCI bundle {}", bundle);
  return 0;
}

}  // namespace jail::runner
