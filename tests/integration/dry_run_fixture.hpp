// What the dry-run suites share: a project the tool edits through --dry-run, the caller's own
// session directory, the session commands run as the suite's caller, and snapshots of trees to
// compare byte for byte.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "run_jail.hpp"

namespace jail_test {

// Path below the root → "type mode content-or-target": what "byte-exact, incl. modes and
// symlinks" means, in a form a failed EXPECT_EQ prints readably. With `mtimes`, each entry's
// modification time too.
using Tree = std::map<std::string, std::string>;
std::string fmt_mode(mode_t mode);
Tree snapshot(const std::string& root, bool mtimes = false);

// The immutable flag stops even root from creating entries: the way to make a commit fail
// midway for both callers.
void set_immutable(const std::string& path, bool on);

class DryRun : public CallerTest {
 protected:
  void SetUp() override;
  // The tool runs `script` with sh in the project, its current directory, under --dry-run.
  RunResult dry_run(const std::string& script);
  // The same with run flags of its own before the "--".
  RunResult dry_run(const std::string& script, std::vector<std::string> flags);
  // The one session the run left.
  std::string session_id();
  // `jail ARGS[0] ARGS[1] --session-dir DIR ARGS[2…]`, as the suite's caller.
  RunResult session_command(std::vector<std::string> args);
  std::map<std::string, std::string> changes_by_path(const std::string& id);

  TempDir sessions_root_;
  std::string project_;
  std::string sessions_;
  Tree before_;
};

}  // namespace jail_test
