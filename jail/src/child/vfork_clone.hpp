// Child side: a clone that shares the caller's memory until the child execs, as posix_spawn's
// does. A plain fork of a process as large as jail copies its page tables, and each page either
// side then writes is copied first: ~3 ms of every runsc start here, for a child that only sets
// up its fds and execs. With CLONE_VM | CLONE_VFORK the parent sleeps until the child's exec (or
// its end), so the child may use the parent's memory as its own meanwhile; but it must run on a
// stack of its own, since the parent's frames are still live below the parent's stack pointer.
// clone3 (not the C library's clone, which has no CLONE_INTO_CGROUP) starts the child on that
// stack at the instruction after the system call, with nothing of a call frame to return to:
// the child's first instructions, here, call its entry and never come back.
//
// Everything here runs after a clone: no allocation, no exceptions, no logging.
#pragma once

#include <linux/sched.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "child/caller_memory.hpp"

namespace jail::child {

// Whether vfork_clone is there: on x86-64 only so far, the one architecture it is tested on, and
// not in sanitized builds (child/caller_memory.hpp), where the child's frames would leave their
// redzones poisoned in the shadow memory it shares with the parent, over the parent's own stack.
// Elsewhere the caller forks.
#if defined(__x86_64__)
inline constexpr bool kVforkCloneAvailable = !kSanitized;
#else
inline constexpr bool kVforkCloneAvailable = false;
#endif

// A child's entry: runs on the child's stack, must end in an exec or an _exit.
using VforkEntry = void (*)(void* argument);

// Clones with `args` plus CLONE_VM | CLONE_VFORK, the child running `entry(argument)` on the
// `stack_size` bytes at `stack` (16-byte aligned); returns in the parent once the child has
// exec'd or ended: the child's pid, or -errno. The child shares the parent's memory until then:
// it may write only its own stack and what the parent no longer needs (errno among them), and
// must leave the C library's state (its locks, its heap, atexit) as it found it.
[[gnu::always_inline]] inline long vfork_clone(clone_args args, void* stack, std::size_t stack_size,
                                               VforkEntry entry, void* argument) {
  args.flags |= CLONE_VM | CLONE_VFORK;
  args.stack = reinterpret_cast<std::uint64_t>(stack);
  args.stack_size = stack_size;
#if defined(__x86_64__)
  long result;
  // entry and argument in registers the system call keeps (not rcx, r11): the child finds them
  // there, since it starts with the parent's registers but rax and rsp.
  asm volatile(
      "syscall\n\t"
      "testq %%rax, %%rax\n\t"
      "jnz 1f\n\t"
      "xorl %%ebp, %%ebp\n\t"
      "andq $-16, %%rsp\n\t"
      "movq %[argument], %%rdi\n\t"
      "callq *%[entry]\n\t"
      "ud2\n"
      "1:"
      : "=a"(result)
      : "a"(SYS_clone3), "D"(&args), "S"(sizeof args), [entry] "r"(entry), [argument] "r"(argument)
      : "rcx", "r11", "memory");
  return result;
#else
  (void)args;
  (void)stack;
  (void)stack_size;
  (void)entry;
  (void)argument;
  return -ENOSYS;
#endif
}

}  // namespace jail::child
