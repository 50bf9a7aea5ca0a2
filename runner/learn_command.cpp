#include "learn_command.hpp"

#include <cstdio>
#include <fstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "jail/launch.hpp"
#include "learned_policy.hpp"
#include "run_options.hpp"

namespace jail::runner {

int learn_command(const std::vector<std::string>& options,
                  const std::vector<std::string>& command) {
  constexpr int kFailed = 125;
  std::vector<std::string> run_options;
  std::string out, merge;
  LearnOptions learn;
  for (std::size_t i = 0; i < options.size(); ++i) {
    const std::string& word = options[i];
    const bool has_value = i + 1 < options.size();
    if ((word == "-o" || word == "--output") && has_value) {
      out = options[++i];
    } else if (word == "--default" && has_value) {
      learn.default_action = options[++i];
    } else if (word == "--merge" && has_value) {
      merge = options[++i];
    } else {
      run_options.push_back(word);
    }
  }
  if (out.empty()) {
    spdlog::error("policy learn: -o OUT.policy is required");
    return kFailed;
  }
  learn.command = command;
  RunOptions run;
  try {
    run = parse_run_options(run_options, command);
  } catch (const std::exception& error) {
    spdlog::error("policy learn: {}", error.what());
    return kFailed;
  }
  run.spec.seccomp_mode = SeccompMode::learn;
  const Result result = jail::run(run.spec);
  if (result.error) spdlog::error("{}", result.error->message);
  if (result.syscalls_seen.empty()) {
    spdlog::error("policy learn: the tool made no syscall the supervisor saw; nothing written");
    return exit_code_for(result) == 0 ? kFailed : exit_code_for(result);
  }
  std::string text;
  std::vector<std::string> added;
  try {
    text = merge.empty() ? learned_policy_text(result.syscalls_seen, learn)
                         : merge_into(merge, result.syscalls_seen, learn, added);
  } catch (const std::exception& error) {
    spdlog::error("policy learn: cannot merge into {}: {}", merge, error.what());
    return kFailed;
  }
  std::ofstream file(out, std::ios::trunc);
  file << text;
  if (!file) {
    spdlog::error("policy learn: cannot write {}", out);
    return kFailed;
  }
  std::fprintf(stderr, "jail: learned %zu syscalls from %s; wrote %s\n",
               result.syscalls_seen.size(), quoted_command(command).c_str(), out.c_str());
  for (const auto& line : added) std::fprintf(stderr, "jail: added %s\n", line.c_str());
  if (!merge.empty() && added.empty())
    std::fprintf(stderr, "jail: %s already allowed everything seen\n", merge.c_str());
  return exit_code_for(result);
}

}  // namespace jail::runner
