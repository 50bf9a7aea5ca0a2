// Parent side: whether the tool's command is known to run in the jail a bundle lays out, and by
// which path. A gVisor run whose command is known to run starts it through jail's policy loader
// (runsc/policy_loader.hpp); any other is left to runsc to find and load, whose error words
// tell a missing command, a missing interpreter and a file that is not executable apart.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "child/plan.hpp"
#include "identity.hpp"
#include "plan_builder.hpp"

namespace jail::oci {

struct CommandLookup {
  const child::Plan& plan;
  const std::vector<OpDescription>& descriptions;
  std::filesystem::path root;
  std::string cwd;       // absolute, normalized
  std::string path_env;  // the jail's PATH; empty when the environment has none
  const Identity& identity;
};

// The path to exec (in the jail) for `command`, found as execvp finds it — a name with a '/'
// taken from the working directory, a bare name tried on each PATH entry in turn — when what it
// finds is known to run: a regular file, executable by the jail's identity, on a mount that is
// not noexec, that is an ELF file or a #! script whose interpreter is such an ELF file. nullopt
// when it is not found or any of that is not known (then the runtime finds it, or says why not).
[[nodiscard]] std::optional<std::string> command_known_to_run(const CommandLookup& lookup,
                                                              const std::string& command);

}  // namespace jail::oci
