// jail's report when the run cannot start: a setup failure is outcome setup_error, exit 125,
// with the step named — under runsc too, where runsc itself refuses (it exits 128 on its own).
#include "support.hpp"

namespace jail_security {
namespace {

class Reporting : public SecurityTest {};

TEST_P(Reporting, RunscRefusalIsASetupError) {
  // A working directory that cannot exist (runsc creates plain missing ones): /proc/self/fd/9
  // with no fd 9. The tool never starts.
  Outcome o = jail({"--cwd", "/proc/self/fd/9"}, {sec_probe("sec_info"), "env"});
  const bool named = o.run.exit_code == 125 && o.outcome() == "setup_error" &&
                     o.status.is_object() && o.status["error"].is_object();
  row("setup_failure_report", "exit 125, outcome setup_error, error named",
      std::to_string(o.run.exit_code) + " " + o.outcome(), named);
  EXPECT_TRUE(named) << o.describe();
}

JAIL_SECURITY_INSTANTIATE(Reporting);

}  // namespace
}  // namespace jail_security
