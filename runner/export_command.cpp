#include "export_command.hpp"

#include <cstdio>
#include <filesystem>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "jail/error.hpp"
#include "jail/oci.hpp"
#include "logging.hpp"
#include "run_options.hpp"

namespace jail::runner {

int export_oci_command(const std::vector<std::string>& options,
                       const std::vector<std::string>& command) {
  constexpr int kFailed = 125;
  // --bundle is this subcommand's own; everything else is a run option.
  std::vector<std::string> run_options;
  std::string bundle;
  std::size_t bundles = 0;
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (options[i] == "--bundle" && i + 1 < options.size()) {
      bundle = options[++i];
      ++bundles;
    } else if (options[i] == "--bundle") {
      spdlog::error("export-oci: --bundle needs a directory: --bundle DIR");
      return kFailed;
    } else if (options[i].starts_with("--bundle=")) {
      bundle = options[i].substr(9);
      ++bundles;
    } else {
      run_options.push_back(options[i]);
    }
  }
  if (bundles > 1) {
    spdlog::error("export-oci: --bundle given {} times; give one directory", bundles);
    return kFailed;
  }
  try {
    RunOptions run = parse_run_options(run_options, command);  // --help is answered here
    setup_logging(run.log);  // -v, -q, --log-file, and the warnings the flags gave
    if (bundle.empty()) {
      spdlog::error("export-oci: --bundle DIR is required (where config.json and rootfs/ go)");
      return kFailed;
    }
    // Each reports on a run, and export-oci runs nothing: taken, they wrote nothing, silently.
    for (const auto& [given, flag] : {std::pair{run.status_fd.has_value(), "--status-fd"},
                                      std::pair{run.status_file.has_value(), "--status-file"},
                                      std::pair{run.audit_log.has_value(), "--audit-log"}}) {
      if (given) {
        spdlog::error("export-oci: {} reports on a run, and export-oci runs nothing; leave it out",
                      flag);
        return kFailed;
      }
    }
    if (run.tty_always) {
      spdlog::error(
          "export-oci: --tty always cannot be carried by the bundle: the runtime that runs it "
          "owns the tool's stdio (runc and crun give a terminal with process.terminal and a "
          "console socket); leave it out");
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
