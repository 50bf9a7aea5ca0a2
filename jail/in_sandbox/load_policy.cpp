// The first program of a gVisor run (runsc/policy_loader.hpp): inside the sandbox it loads the
// jail's policy as a seccomp filter on itself, then execs the tool, which inherits the filter.
// gVisor's sentry then applies the same BPF program a native run's kernel would (with the
// direct actions: ERRNO with the policy's own code, KILL_PROCESS enforced by the sentry), and
// jail no longer hands runsc an OCI profile to convert and log at every start.
//
// It is built freestanding (no C library: a static binary of a few KiB that jail writes into
// each bundle), so everything it calls is a raw system call, and it allocates nothing.
//
//   load-policy PROGRAM PATH ARGV0 [ARGV...]
//
// PROGRAM is a file holding the policy's instructions as the kernel takes them (struct
// sock_filter[]); PATH is the tool's file, found by jail; ARGV0... the tool's argv. The program
// is a file, not an argument or a variable: gVisor rebuilds the environment from a map (in no
// fixed order, the last of a name winning, so a --env of the same name could stand in for it),
// and every argument is printed twice in each start's debug log.
//
// Every step fails closed: the tool never runs without its filter. Exit codes follow jail's
// contract: 125 the policy could not be loaded, 127 PATH not found, 126 not executable.
#include <fcntl.h>
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

constexpr std::size_t kMaxInstructions = BPF_MAXINSNS;

// The program as read: static, as nothing here allocates. One instruction more than the most a
// filter may have, so that a longer file is seen to be longer.
sock_filter program[kMaxInstructions + 1];

std::size_t length(const char* text) {
  std::size_t n = 0;
  while (text[n] != '\0') ++n;
  return n;
}

void say(const char* text) {
  (void)raw::call(SYS_write, 2, text, length(text));
}

// The errnos these steps can fail with, by name, as jail's own messages give them.
const char* errno_name(long err) {
  switch (err) {
    case ENOENT:
      return "ENOENT: no such file or directory";
    case ENOTDIR:
      return "ENOTDIR: a component of the path is not a directory";
    case EACCES:
      return "EACCES: permission denied";
    case ENOEXEC:
      return "ENOEXEC: not an executable format";
    case ETXTBSY:
      return "ETXTBSY: the file is open for writing";
    case ELOOP:
      return "ELOOP: too many symbolic links";
    case ENAMETOOLONG:
      return "ENAMETOOLONG: the path is too long";
    case E2BIG:
      return "E2BIG: the arguments are too long";
    case ENOMEM:
      return "ENOMEM: out of memory";
    case EMFILE:
      return "EMFILE: too many open files";
    case EISDIR:
      return "EISDIR: is a directory";
    case EINVAL:
      return "EINVAL: invalid argument";
    case EFAULT:
      return "EFAULT: bad address";
    case EPERM:
      return "EPERM: operation not permitted";
    default:
      return "an unexpected error";
  }
}

// "jail: in the gVisor sandbox: WHAT[SUBJECT][: ERRNO]", then the exit status.
[[noreturn]] void fail(const char* what, const char* subject, long err, int status) {
  say("jail: in the gVisor sandbox: ");
  say(what);
  if (subject != nullptr) say(subject);
  if (err > 0) {
    say(": ");
    say(errno_name(err));
  }
  say("\n");
  raw::exit_group(status);
}

// Reads the program file whole into `program`; returns its instruction count.
std::size_t read_program(const char* path) {
  const long fd = raw::call(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open the policy's program ", path, -fd, 125);
  auto* bytes = reinterpret_cast<char*>(program);
  std::size_t size = 0;
  while (size < sizeof program) {
    const long got = raw::call(SYS_read, fd, bytes + size, sizeof program - size);
    if (got == -EINTR) continue;
    if (got < 0) fail("cannot read the policy's program ", path, -got, 125);
    if (got == 0) break;
    size += static_cast<std::size_t>(got);
  }
  (void)raw::call(SYS_close, fd);
  if (size == 0 || size % sizeof(sock_filter) != 0 || size / sizeof(sock_filter) > kMaxInstructions)
    fail("the policy's program is not whole BPF instructions (at most 4096): ", path, 0, 125);
  return size / sizeof(sock_filter);
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
  if (argc < 4) fail("usage: load-policy PROGRAM PATH ARGV0 [ARGV...]", nullptr, 0, 125);
  const std::size_t instructions = read_program(argv[1]);
  // gVisor, like Linux, takes a filter from a task without CAP_SYS_ADMIN only under
  // no_new_privs; the bundle asks for it too, and a second ask is harmless.
  if (const long err = raw::call(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != 0)
    fail("cannot set no_new_privs", nullptr, -err, 125);
  sock_fprog fprog{static_cast<unsigned short>(instructions), program};
  if (const long err = raw::call(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog); err != 0)
    fail("cannot load the policy's seccomp filter", nullptr, -err, 125);
  const long err = raw::call(SYS_execve, argv[2], argv + 3, envp);
  fail("cannot execute ", argv[2], -err, -err == ENOENT || -err == ENOTDIR ? 127 : 126);
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
