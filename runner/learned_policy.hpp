// Writes a readable policy from what a learning run saw, `within` its base: the families the run
// used, the samples no family covers, commented with counts and with the values of the arguments
// that matter by name (learned_rules.hpp), dangerous calls marked for review.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jail/result.hpp"
#include "policy/policy.hpp"

namespace jail::runner {

struct LearnOptions {
  std::string default_action = "errno EPERM";
  std::vector<std::string> command;  // the learned command's words, for the header
  bool strict = false;               // exact samples, no families
  std::string failed_run;            // how the run failed, when --allow-failed-run wrote it anyway
};

// The policy a learned one narrows (--base): nothing the learned policy allows goes past it.
struct LearnBase {
  policy::Policy policy;
  std::string written_as;  // in the `within` line: the shipped name, or a path from the output
};

// Throws std::runtime_error (a PolicyError with the loader's diagnostics, or a path that
// cannot be written in a `within` line).
[[nodiscard]] LearnBase load_learn_base(const std::string& name_or_path,
                                        const std::string& output_dir);

// The command as one line a reader can paste into a shell: plain words as they are, others
// single-quoted, and words with control characters as $'...' with escapes. The words come from
// whoever ran `jail policy learn` (a script they did not read); raw, a newline in one would end
// the comment it is written in and start a rule.
[[nodiscard]] std::string quoted_command(const std::vector<std::string>& words);

[[nodiscard]] std::string learned_policy_text(const std::vector<SyscallUse>& seen,
                                              const LearnOptions& options, const LearnBase& base);

// Why `action` cannot follow `default` in a policy, or nullopt when it can. It must be one action
// on one line: "errno EPERM\nallow ptrace" would load, as a default and a rule.
[[nodiscard]] std::optional<std::string> default_action_problem(const std::string& action);

// The policy --merge names (a file or a shipped name), read before the run.
struct MergeBase {
  policy::Policy policy;  // what it allows already
  // Its text, each include of a file by a relative path rewritten to reach the same file from
  // the output's directory: the loader resolves it from the including file's directory.
  std::string text;
};

// Throws std::runtime_error saying why it cannot be the base: the loader's diagnostics, or an
// include that cannot be written as a path from `output_dir`.
[[nodiscard]] MergeBase load_merge_base(const std::string& name_or_path,
                                        const std::string& output_dir);

// The same rules, for only the calls `base` does not allow yet, put in front of its text (rules
// are tried in order, so they take effect); its `within`, if any, still bounds them.
[[nodiscard]] std::string merge_into(const MergeBase& base, const std::vector<SyscallUse>& seen,
                                     const LearnOptions& options);

// What jail's policy loader and compiler say against `text` read as the file `path` (includes
// resolve from its directory), or nullopt when `jail --policy path` would take it.
[[nodiscard]] std::optional<std::string> load_problems(const std::string& text,
                                                       const std::string& path);

}  // namespace jail::runner
