// Where keyctl itself is refused (Docker's default profile refuses it), the Landlock mode's init
// cannot join a session keyring of its own, and the tool would start in the caller's. The init
// then refuses every keyring call for the tool: played here by no_userns --keyring-join-refused,
// which refuses the join and nothing else, so that only jail's own refusal keeps the caller's
// key from the tool (--policy none: no jail policy decides keyctl).
#include <gtest/gtest.h>

#include <string>

#include "run_jail.hpp"

namespace jail_test {
namespace {

TEST(KeyringRefused, TheToolGetsNoneOfTheCallersKeys) {
  TempDir dir;
  // The caller, before jail: a session keyring of its own (not the test runner's), and a key in
  // it; then jail, through the probe.
  const std::string caller =
      "import ctypes, os, sys\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "assert libc.syscall(250, 1, None) > 0, 'join'\n"
      "assert libc.syscall(248, b'user', b'jailtest-join-refused', b'KEY-PAYLOAD', 11, -3) > 0\n"
      "os.execv(sys.argv[1], sys.argv[1:])\n";
  const std::string tool =
      "import ctypes\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "key = libc.syscall(250, 10, -3, b'user', b'jailtest-join-refused', 0)\n"
      "print('search', key, ctypes.get_errno())\n"
      "buffer = ctypes.create_string_buffer(64)\n"
      "print('read', libc.syscall(250, 11, key, buffer, 64), buffer.value)\n"
      "print('add', libc.syscall(248, b'user', b'x', b'y', 1, -3), ctypes.get_errno())\n";
  RunOptions options;
  options.caller = Caller::unprivileged;
  options.cwd = dir.path();
  options.extra_env = {"TMPDIR=" + dir.path()};
  options.wrapper = {"/usr/bin/python3", "-c", caller, std::string(JAIL_PROBE_DIR) + "/no_userns",
                     "--keyring-join-refused"};
  const RunResult r =
      run_jail({"--net", "host", "--policy", "none", "--", "python3", "-c", tool}, options);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out.find("KEY-PAYLOAD"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("search -1 1"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("add -1 1"), std::string::npos) << describe(r);
}

}  // namespace
}  // namespace jail_test
