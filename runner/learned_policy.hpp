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
  std::vector<std::string> command;  // the learned command's words, for the header
};

// The command as one line a reader can paste into a shell: plain words as they are, others
// single-quoted, and words with control characters as $'...' with escapes. The words come from
// whoever ran `jail policy learn` (a script they did not read); raw, a newline in one would end
// the comment it is written in and start a rule.
[[nodiscard]] std::string quoted_command(const std::vector<std::string>& words);

[[nodiscard]] std::string learned_policy_text(const std::vector<SyscallUse>& seen,
                                              const LearnOptions& options);

// The same rules, for only the calls `existing` does not allow yet, put in front of the existing
// text (rules are tried in order, so they take effect). `added` gets one line per syscall added.
[[nodiscard]] std::string merge_into(const std::string& existing_path,
                                     const std::vector<SyscallUse>& seen,
                                     const LearnOptions& options, std::vector<std::string>& added);

}  // namespace jail::runner
