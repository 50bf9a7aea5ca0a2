// Writes a readable policy from what a learning run saw: grouped, commented with counts,
// conditions for the arguments that matter (ioctl requests, socket domains, clone flags, prctl
// options, fcntl commands), dangerous calls marked for review.
#pragma once

#include <string>
#include <vector>

#include "jail/result.hpp"

namespace jail::runner {

struct LearnOptions {
  std::string default_action = "errno EPERM";
  std::string command;  // for the header
};

[[nodiscard]] std::string learned_policy_text(const std::vector<SyscallUse>& seen,
                                              const LearnOptions& options);

// The same rules, for only the calls `existing` does not allow yet, put in front of the existing
// text (rules are tried in order, so they take effect). `added` gets one line per syscall added.
[[nodiscard]] std::string merge_into(const std::string& existing_path,
                                     const std::vector<SyscallUse>& seen,
                                     const LearnOptions& options, std::vector<std::string>& added);

}  // namespace jail::runner
