// Child side: letting go of the caller's memory. A process cloned from the caller (a native
// jail's init, runsc's keeper) starts as a copy-on-write copy of all of it and, left alone, holds
// that copy for as long as the run lasts: a page the caller frees stays allocated, and a page it
// writes is copied first. For a library host with a large heap that keeps working during its
// runs, each run in flight would cost up to one more heap. Once such a process needs nothing
// but its own stack and the code it runs, it unmaps the caller's anonymous memory.
//
// Everything here but learn_caller_heap_start runs after a clone: no allocation, no exceptions,
// no logging.
#pragma once

#include "child/raw_syscall.hpp"

namespace jail::child {

// Under AddressSanitizer (and HWASan) every access is checked against shadow memory, itself
// anonymous, and a local may live on a fake stack of its own (detect_stack_use_after_return):
// letting go would take those too. The thread and memory sanitizers shadow memory likewise.
// Sanitized builds, which are for tests, keep the caller's memory.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(__SANITIZE_HWADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(hwaddress_sanitizer) || \
    __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

// Whether this build lets go at all: it needs raw system calls (raw::kAvailable) and no
// sanitizer. Where it does not, open_own_maps gives -1 and nothing is let go.
inline constexpr bool kLetsGoOfCallerMemory = raw::kAvailable && !kSanitized;

// Parent side, before the clone: learns where the caller's brk heap starts, which the child
// cannot read once it is in its own namespaces, and keeps it where the clone copies it.
void learn_caller_heap_start();

// Opens the calling process's own /proc/self/maps (close-on-exec, numbered 32 or above), while
// the host's /proc is still there to open; -1 where nothing is to be let go (a build that does
// not, arm64 with a guarded control stack on) or it cannot be opened (no /proc, an RLIMIT_NOFILE
// of 32 or less). The fd is the one gate: let_go_of_caller_memory does nothing without it.
int open_own_maps();

// Unmaps every private anonymous mapping of the process except the stack it runs on, its
// thread's TLS and rseq area, executable ones and zero-filled tails of loaded files (.bss), then
// closes `maps_fd`. From here on the process may use nothing that lived on the heap or in
// another thread's memory, and makes its system calls through child/raw_syscall.hpp only:
// a C library function never called before would be bound through the dynamic linker's data.
// Does nothing with `maps_fd` -1.
void let_go_of_caller_memory(int maps_fd);

}  // namespace jail::child
