// `jail policy check|explain|bpf|diff|import|export`: the reviewer's tools on the command line.
#pragma once

namespace jail::runner {

// argv[0] is "policy", the rest are the subcommand and its words. Returns the process exit
// code: 0 when everything was fine, 1 for errors in a policy, 2 for a usage error.
[[nodiscard]] int run_policy_command(int argc, char** argv);

}  // namespace jail::runner
