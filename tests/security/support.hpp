// What every security test shares: the modes a probe runs in (root or unprivileged caller,
// native or runsc), running a probe in a jail with its status JSON, reading the probe's
// "NAME=RESULT" lines, and the containment table row each test prints.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_jail.hpp"

namespace jail_security {

using namespace jail_test;  // NOLINT: the integration suite's runner is this suite's too

enum class Runtime { native, runsc };

struct Mode {
  Caller caller;
  Runtime runtime;
};

std::string mode_name(const ::testing::TestParamInfo<Mode>& info);

// One jail run: jail's exit, the status JSON, and the probe's NAME=RESULT lines.
struct Outcome {
  RunResult run;
  nlohmann::json status;  // null when jail wrote none
  std::map<std::string, std::string> values;

  // The probe's result for `name`, "" when it printed none (e.g. it was killed first).
  [[nodiscard]] std::string value(const std::string& name) const;
  [[nodiscard]] std::string outcome() const;
  [[nodiscard]] std::string violation_syscall() const;
  [[nodiscard]] std::string describe() const;
};

class SecurityTest : public ::testing::TestWithParam<Mode> {
 protected:
  [[nodiscard]] bool as_root() const { return GetParam().caller == Caller::root; }
  [[nodiscard]] bool runsc() const { return GetParam().runtime == Runtime::runsc; }
  // runsc refusing to start the sandbox: it exits 128 and the probe printed nothing. (jail
  // reports that as outcome "exited", exit_code 128; RunscRefusalIsASetupError holds it to 125.)
  [[nodiscard]] bool runsc_refused(const Outcome& o) const {
    return runsc() && o.run.exit_code == 128 && o.values.empty();
  }

  // jail [runtime flags] --status-file F --ro-bind probes:/probes FLAGS -- COMMAND.
  // Under runsc the runtime flags are `--runtime runsc`: jail's default policy applies there as
  // natively (gVisor enforces it; jail reads the denials and kills from gVisor's log).
  Outcome jail(const std::vector<std::string>& flags, const std::vector<std::string>& command,
               RunOptions options = {});
  // The same, started and left running; finish() collects it.
  std::unique_ptr<JailProcess> start(const std::vector<std::string>& flags,
                                     const std::vector<std::string>& command,
                                     RunOptions options = {});
  Outcome finish(JailProcess& process, std::chrono::milliseconds timeout = 60s);

  // The flags of the tests about what the kernel (or gVisor) refuses by itself, with no policy.
  [[nodiscard]] static std::vector<std::string> no_policy() { return {"--policy", "none"}; }

  // Prints one row of the containment table (and records it as a test property).
  void row(const std::string& probe, const std::string& expected, const std::string& observed,
           bool contained);

  TempDir cwd_;      // jail's working directory on the host, readable by both callers
  TempDir scratch_;  // status files and other host-side files of the test

 private:
  std::vector<std::string> full_args(const std::vector<std::string>& flags,
                                     const std::vector<std::string>& command);
  RunOptions with_caller(RunOptions options);
  std::string status_path_;
};

// Parses NAME=RESULT lines (the first '=' splits; later lines win).
std::map<std::string, std::string> parse_values(const std::string& text);
// True when `value` is one of `allowed`.
bool one_of(const std::string& value, std::initializer_list<const char*> allowed);
// The host's processes whose command line contains `token` (pids), excluding this process.
std::vector<int> host_processes_with(const std::string& token);
// Where the probes are inside the jail.
std::string sec_probe(const std::string& name);

}  // namespace jail_security

#define JAIL_SECURITY_INSTANTIATE(suite)                                                      \
  INSTANTIATE_TEST_SUITE_P(                                                                   \
      Modes, suite,                                                                           \
      ::testing::Values(                                                                      \
          ::jail_security::Mode{::jail_test::Caller::root, ::jail_security::Runtime::native}, \
          ::jail_security::Mode{::jail_test::Caller::unprivileged,                            \
                                ::jail_security::Runtime::native},                            \
          ::jail_security::Mode{::jail_test::Caller::root, ::jail_security::Runtime::runsc}), \
      ::jail_security::mode_name)
