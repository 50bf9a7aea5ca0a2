// The caller's keys stay the caller's: the tool starts in an empty session keyring of its own,
// so it possesses none of the caller's keys (no payload can be read, even with no filter at
// all), and a root caller's keys are not even listed (their owner is not in the tool's
// namespace). An unprivileged caller's tool is the caller's uid: /proc/keys lists that uid's
// key names (masking it needs root in the namespace, which jail never maps); payloads stay
// unreadable.
#include <gtest/gtest.h>

#include <string>

#include "../support/shell_quote.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

class Keyring : public CallerTest {};

TEST_P(Keyring, TheCallersKeysAreNotTheTools) {
  TempDir work;
  // The caller adds a key to its session keyring and one to its user keyring, then runs jail
  // with no filter: the tool lists /proc/keys and tries to read both by serial.
  write_file(
      work / "keys.py",
      "import ctypes, os, sys\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "s = libc.syscall(248, b'user', b'jailtest-session-secret', b'payload-s', 9, -3)\n"
      "u = libc.syscall(248, b'user', b'jailtest-user-secret', b'payload-u', 9, -4)\n"
      "assert s > 0 and u > 0, 'add_key failed'\n"
      "tool = ('import ctypes; l = ctypes.CDLL(None); b = ctypes.create_string_buffer(64)\\n'\n"
      "        'print(open(\"/proc/keys\").read())\\n'\n"
      "        f'print(\"session read\", l.syscall(250, 11, {s}, b, 64), b.value)\\n'\n"
      "        f'print(\"user read\", l.syscall(250, 11, {u}, b, 64), b.value)\\n')\n"
      "os.execv(sys.argv[1], ['jail', '-q', '--no-cwd', '--policy', 'none', '--',\n"
      "                       'python3', '-c', tool])\n",
      0644);
  const std::string as_caller =
      as_root() ? "" : "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  const std::string out =
      shell_output(as_caller + "/usr/bin/python3 " + shell_quote(work / "keys.py") + " " +
                   shell_quote(JAIL_BINARY));
  EXPECT_NE(out.find("session read -1 b''"), std::string::npos) << out;
  EXPECT_NE(out.find("user read -1 b''"), std::string::npos) << out;
  EXPECT_EQ(out.find("payload-"), std::string::npos) << out;
  if (as_root()) {
    EXPECT_EQ(out.find("jailtest-"), std::string::npos) << out;
  }
  // Its own session keyring, empty, owned by the tool.
  EXPECT_NE(out.find("keyring   _ses: empty"), std::string::npos) << out;
}

JAIL_INSTANTIATE_FOR_CALLERS(Keyring);

}  // namespace
}  // namespace jail_test
