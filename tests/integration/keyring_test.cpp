// The caller's keys stay the caller's: the tool starts in an empty session keyring of its own,
// so it possesses none of the caller's keys (no payload can be read, even with no filter at
// all), and /proc/keys and /proc/key-users read as empty, so not even a key's name is listed
// (an unprivileged caller's tool is the caller's uid, whose keys the kernel would list).
#include <gtest/gtest.h>

#include <string>
#include <vector>

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
      "import subprocess\n"
      "run = subprocess.run([sys.argv[1], '-q', '--no-cwd', '--policy', 'none', '--',\n"
      "                      'sh', '-c', 'cat /proc/key-users; python3 -c \"$0\"', tool],\n"
      "                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)\n"
      "print(run.stdout)\n"
      "libc.syscall(250, 9, s, -3); libc.syscall(250, 9, u, -4)  # KEYCTL_UNLINK: none left\n",
      0644);
  const std::string as_caller =
      as_root() ? "" : "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  const std::string out =
      shell_output(as_caller + "/usr/bin/python3 " + shell_quote(work / "keys.py") + " " +
                   shell_quote(JAIL_BINARY));
  EXPECT_NE(out.find("session read -1 b''"), std::string::npos) << out;
  EXPECT_NE(out.find("user read -1 b''"), std::string::npos) << out;
  EXPECT_EQ(out.find("payload-"), std::string::npos) << out;
  EXPECT_EQ(out.find("jailtest-"), std::string::npos) << out;
  // Nothing of any keyring is listed, not even the tool's own, nor a user's count.
  EXPECT_EQ(out.find("keyring"), std::string::npos) << out;
  EXPECT_EQ(out.find(": "), std::string::npos) << out;
}

// A tool that nests jails needs a whole procfs to mount one of its own; --unmask /proc/keys
// leaves /proc whole, and by default a nested procfs is refused.
TEST_P(Keyring, AWholeProcIsAskedFor) {
  const std::vector<std::string> nested = {"--no-cwd", "--policy", "none",         "--",
                                           "unshare",  "-Urpf",    "--mount-proc", "true"};
  EXPECT_NE(run(nested).exit_code, 0);
  std::vector<std::string> whole = {"--unmask", "/proc/keys"};
  whole.insert(whole.end(), nested.begin(), nested.end());
  const RunResult result = run(whole);
  EXPECT_EQ(result.exit_code, 0) << result.err;
}

JAIL_INSTANTIATE_FOR_CALLERS(Keyring);

}  // namespace
}  // namespace jail_test
