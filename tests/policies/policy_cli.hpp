// What the policy tests share: `jail policy …` run in-process with its output captured, a
// syscall's seccomp_data, and a scratch directory for policy files.
#pragma once

#include <linux/seccomp.h>

#include <cstdint>
#include <string>
#include <vector>

namespace jail::policy_test {

struct CliRun {
  int code;
  std::string out, err;
};

// `jail policy WORDS...`: the exit code and what it printed.
[[nodiscard]] CliRun run_policy_cli(std::vector<std::string> words);

// An x86_64 call of `nr` with the arguments given (the rest 0).
[[nodiscard]] seccomp_data call(long nr, std::vector<std::uint64_t> args = {});

// A directory under /tmp for one test's policy files, removed with them at its end.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // Writes `body` to NAME in the directory; its path.
  std::string write(const std::string& name, const std::string& body) const;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace jail::policy_test
