// The first program of a gVisor run (runsc/policy_loader.hpp): inside the sandbox it loads the
// jail's policy as a seccomp filter on itself, then execs the tool, which inherits the filter.
// gVisor's sentry then applies the same BPF program a native run's kernel would (with the
// direct actions: ERRNO with the policy's own code, KILL_PROCESS enforced by the sentry), and
// jail no longer hands runsc an OCI profile to convert and log at every start.
//
// It is built freestanding (no C library: a static binary of a few KiB that jail writes into
// each bundle), so everything it calls is a raw system call, and it allocates nothing.
//
//   load-policy PATH ARGV0 ARGV...     with JAIL_SECCOMP_PROGRAM=<hex of struct sock_filter[]>
//
// Every step fails closed: the tool never runs without its filter. Exit codes follow jail's
// contract: 125 the policy could not be loaded, 127 PATH not found, 126 not executable.
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>

#include "child/raw_syscall.hpp"

#if !defined(__x86_64__)
#error "the policy loader's entry point is written for x86_64 only"
#endif

namespace {

namespace raw = jail::child::raw;

constexpr char kProgramVariable[] = "JAIL_SECCOMP_PROGRAM=";
constexpr std::size_t kMaxInstructions = BPF_MAXINSNS;

// The decoded program: static, as nothing here allocates.
sock_filter program[kMaxInstructions];

std::size_t length(const char* text) {
  std::size_t n = 0;
  while (text[n] != '\0') ++n;
  return n;
}

bool starts_with(const char* text, const char* prefix) {
  for (; *prefix != '\0'; ++text, ++prefix)
    if (*text != *prefix) return false;
  return true;
}

void say(const char* text) {
  (void)raw::call(SYS_write, 2, text, length(text));
}

void say_number(long value) {
  char digits[24];
  char* at = digits + sizeof digits;
  *--at = '\0';
  do {
    *--at = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0 && at > digits);
  say(at);
}

// "jail: in the gVisor sandbox: WHAT (errno N)", then the exit status.
[[noreturn]] void fail(const char* what, const char* subject, long err, int status) {
  say("jail: in the gVisor sandbox: ");
  say(what);
  if (subject != nullptr) say(subject);
  if (err > 0) {
    say(" (errno ");
    say_number(err);
    say(")");
  }
  say("\n");
  raw::exit_group(status);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The program from its variable; 0 if it is missing, empty, too long or not whole instructions.
std::size_t decode_program(const char* hex) {
  const std::size_t digits = length(hex);
  constexpr std::size_t kDigitsPerInstruction = 2 * sizeof(sock_filter);
  if (digits == 0 || digits % kDigitsPerInstruction != 0 ||
      digits / kDigitsPerInstruction > kMaxInstructions)
    return 0;
  auto* bytes = reinterpret_cast<unsigned char*>(program);
  for (std::size_t i = 0; i < digits; i += 2) {
    const int high = hex_digit(hex[i]);
    const int low = hex_digit(hex[i + 1]);
    if (high < 0 || low < 0) return 0;
    bytes[i / 2] = static_cast<unsigned char>(high << 4 | low);
  }
  return digits / kDigitsPerInstruction;
}

// Takes the program's variable out of `envp` (in place: the tool never sees it) and returns its
// value, or nullptr.
const char* take_program_variable(char** envp) {
  const char* found = nullptr;
  char** kept = envp;
  for (char** entry = envp; *entry != nullptr; ++entry) {
    if (found == nullptr && starts_with(*entry, kProgramVariable)) {
      found = *entry + sizeof kProgramVariable - 1;
      continue;
    }
    *kept++ = *entry;
  }
  *kept = nullptr;
  return found;
}

}  // namespace

// The compiler may emit calls to these for copies and zeroing even in freestanding code.
extern "C" void* memset(void* to, int value, std::size_t n) {
  auto* bytes = static_cast<unsigned char*>(to);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<unsigned char>(value);
  return to;
}
extern "C" void* memcpy(void* to, const void* from, std::size_t n) {
  auto* out = static_cast<unsigned char*>(to);
  const auto* in = static_cast<const unsigned char*>(from);
  for (std::size_t i = 0; i < n; ++i) out[i] = in[i];
  return to;
}

extern "C" [[noreturn]] void load_policy_main(long* stack) {
  const long argc = stack[0];
  char** argv = reinterpret_cast<char**>(stack + 1);
  char** envp = argv + argc + 1;
  if (argc < 3) fail("usage: load-policy PATH ARGV0 [ARGV...]", nullptr, 0, 125);
  const char* hex = take_program_variable(envp);
  const std::size_t instructions = hex != nullptr ? decode_program(hex) : 0;
  if (instructions == 0)
    fail("cannot load the policy: JAIL_SECCOMP_PROGRAM is missing or malformed", nullptr, 0, 125);
  // gVisor, like Linux, takes a filter from a task without CAP_SYS_ADMIN only under
  // no_new_privs; the bundle asks for it too, and a second ask is harmless.
  if (const long err = raw::call(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != 0)
    fail("cannot set no_new_privs", nullptr, -err, 125);
  sock_fprog fprog{static_cast<unsigned short>(instructions), program};
  if (const long err = raw::call(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog); err != 0)
    fail("cannot load the policy's seccomp filter", nullptr, -err, 125);
  const long err = raw::call(SYS_execve, argv[1], argv + 2, envp);
  fail("cannot execute ", argv[1], -err, -err == ENOENT || -err == ENOTDIR ? 127 : 126);
}

// The entry point: the kernel leaves argc, argv and envp on the stack; the ABI wants it 16-byte
// aligned at the call.
asm(R"(
  .globl _start
  .type _start, @function
_start:
  xor %ebp, %ebp
  mov %rsp, %rdi
  and $-16, %rsp
  call load_policy_main
  hlt
)");
