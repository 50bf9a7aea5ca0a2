// A system call made by the instruction itself: no C library function, so no PLT entry that a
// lazy binding would resolve through the dynamic linker's data, and no errno. What runs after
// the caller's memory was let go (child/caller_memory.hpp) makes its calls this way, because
// the dynamic linker's and the C library's heap are gone from the process by then. For the same
// reason everything here, and every helper that runs after the letting go, is always inlined:
// libjail.a linked into a shared object and built without optimisation would otherwise call
// them through that object's PLT.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <type_traits>

namespace jail::child::raw {

#if defined(__x86_64__) || defined(__aarch64__)
inline constexpr bool kAvailable = true;
#else
inline constexpr bool kAvailable = false;
#endif

[[gnu::always_inline]] inline long call_words(long number, long a1, long a2, long a3, long a4,
                                              long a5) {
#if defined(__x86_64__)
  long result;
  register long r10 asm("r10") = a4;
  register long r8 asm("r8") = a5;
  asm volatile("syscall"
               : "=a"(result)
               : "a"(number), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8)
               : "rcx", "r11", "memory");
  return result;
#elif defined(__aarch64__)
  register long x8 asm("x8") = number;
  register long x0 asm("x0") = a1;
  register long x1 asm("x1") = a2;
  register long x2 asm("x2") = a3;
  register long x3 asm("x3") = a4;
  register long x4 asm("x4") = a5;
  asm volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
  return x0;
#else
  // Elsewhere the caller's memory is never let go (kAvailable), so the C library is still whole.
  const long result = ::syscall(number, a1, a2, a3, a4, a5);
  return result < 0 ? -errno : result;
#endif
}

template <typename T>
[[gnu::always_inline]] inline long word(T value) {
  if constexpr (std::is_null_pointer_v<T>) {
    return 0;
  } else if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<long>(value);
  } else {
    return static_cast<long>(value);
  }
}

// The kernel's return: the result, or -errno. Arguments are integers or pointers, up to five.
template <typename... Args>
[[gnu::always_inline]] inline long call(long number, Args... args) {
  static_assert(sizeof...(Args) <= 5);
  long words[5] = {word(args)...};
  return call_words(number, words[0], words[1], words[2], words[3], words[4]);
}

[[noreturn, gnu::always_inline]] inline void exit_group(int status) {
  for (;;) call(SYS_exit_group, status);
}

// The calling thread's end; for a single-threaded process, the process's. The tool's failed
// start ends this way under an open-files limit, where its filter would send exit_group to a
// supervisor that does not hold the listener yet (seccomp/exit_watch.hpp).
[[noreturn, gnu::always_inline]] inline void exit_thread(int status) {
  for (;;) call(SYS_exit, status);
}

}  // namespace jail::child::raw
