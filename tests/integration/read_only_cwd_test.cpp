// The current directory is bound read-only by default, and a tool that writes there gets EROFS
// with nothing to say which flag was missing. jail notes the first write that lands in it (its
// filter sends write-intent calls to the supervisor) and ends with one line naming the flag.
#include <gtest/gtest.h>

#include <string>

#include "run_jail.hpp"

namespace jail_test {
namespace {

class ReadOnlyCwd : public CallerTest {};

TEST_P(ReadOnlyCwd, AWriteThereEndsWithOneHintLine) {
  const RunResult refused = run({"--", "sh", "-c", "echo x > out.txt; echo x > out.txt; exit 3"});
  EXPECT_EQ(refused.exit_code, 3) << describe(refused);
  const std::string hint = "jail: the tool tried to write " + (cwd_ / "out.txt") +
                           " in the current directory " + cwd_.path() +
                           ", which is bound read-only (EROFS): --bind . makes it writable";
  EXPECT_NE(refused.err.find(hint), std::string::npos) << describe(refused);
  EXPECT_EQ(refused.err.find(hint), refused.err.rfind(hint)) << "one line\n" << describe(refused);

  const RunResult mkdir =
      run({"--", "python3", "-c", "import os\ntry: os.mkdir('d')\nexcept OSError: pass"});
  EXPECT_NE(mkdir.err.find("tried to write " + (cwd_ / "d")), std::string::npos) << describe(mkdir);

  // Writes elsewhere, reads here, and a writable current directory say nothing.
  const RunResult elsewhere =
      run({"--", "sh", "-c", "echo x > /tmp/ok && ls . > /dev/null && cat /dev/null"});
  EXPECT_EQ(elsewhere.exit_code, 0) << describe(elsewhere);
  EXPECT_EQ(elsewhere.err.find("tried to write"), std::string::npos) << describe(elsewhere);
  const RunResult writable = run({"--bind", ".", "--", "sh", "-c", "echo x > out.txt"});
  EXPECT_EQ(writable.exit_code, 0) << describe(writable);
  EXPECT_EQ(writable.err.find("tried to write"), std::string::npos) << describe(writable);
}

JAIL_INSTANTIATE_FOR_CALLERS(ReadOnlyCwd);

}  // namespace
}  // namespace jail_test
