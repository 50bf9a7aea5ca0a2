#include "child/caller_memory.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>  // __rseq_offset: glibc 2.35 and later, which register rseq
#define JAIL_HAS_RSEQ_OFFSET 1
#endif

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <mutex>
#include <sstream>
#include <string>

#include "child/raw_syscall.hpp"

namespace jail::child {
namespace {

using Address = std::uintptr_t;

// One line of /proc/self/maps, as far as deciding on it needs: "start-end perms offset dev inode
// name". The name is where the line holds it, cut short on a line longer than the buffer.
struct Mapping {
  Address start = 0;
  Address end = 0;
  char perms[4] = {};
  bool file_backed = false;  // an inode: a file's pages, which a clone does not copy
  const char* name = nullptr;
  std::size_t name_length = 0;
};

// What the process goes on using from memory that is not a file's: its stack, its thread's TLS
// (errno, the stack protector's canary), the rseq area the kernel writes on every preemption and
// the shadow stack every return checks, where the CPU keeps one.
struct Needed {
  Address addresses[5] = {};
};

// Where the caller's brk heap starts (/proc/self/stat), learnt by the parent before it clones:
// the clone's copy of this variable is what the child reads. 0 while unknown.
Address caller_heap_start = 0;

// x86's user shadow stack (CET): a mapping of its own, anonymous, that the next return needs.
// rdsspq leaves 0 where shadow stacks are off or the CPU has none (it is a no-op there).
Address shadow_stack_pointer() {
#if defined(__x86_64__)
  unsigned long pointer = 0;
  asm volatile("rdsspq %0" : "+r"(pointer));
  return pointer;
#else
  return 0;
#endif
}

// arm64's guarded control stack is not located here: where it is on, nothing is let go.
bool has_guarded_control_stack() {
#if defined(__aarch64__)
  constexpr int kGetShadowStackStatus = 74;  // PR_GET_SHADOW_STACK_STATUS (Linux 6.13)
  unsigned long status = 0;
  return raw::call(SYS_prctl, kGetShadowStackStatus, &status, 0, 0, 0) == 0 && (status & 1) != 0;
#else
  return false;
#endif
}

// The loops below compare and skip by hand: a call to memchr or memcmp could be the first through
// a PLT entry, bound lazily through the dynamic linker's heap while it is being unmapped.
bool starts_with(const char* text, std::size_t length, const char* prefix) {
  std::size_t i = 0;
  for (; prefix[i] != '\0'; ++i) {
    if (i == length || text[i] != prefix[i]) return false;
  }
  return true;
}

bool equals(const char* text, std::size_t length, const char* literal) {
  return starts_with(text, length, literal) && literal[length] == '\0';
}

int digit_value(char c, int base) {
  if (c >= '0' && c <= '9') return c - '0';
  if (base == 16 && c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Reads a number at `at`, leaves `at` after it; false if there is none.
bool number(const char*& at, const char* end, int base, Address& value) {
  const char* first = at;
  value = 0;
  for (int d; at < end && (d = digit_value(*at, base)) >= 0; ++at) {
    value = value * static_cast<Address>(base) + static_cast<Address>(d);
  }
  return at != first;
}

bool skip(const char*& at, const char* end, char expected) {
  if (at == end || *at != expected) return false;
  ++at;
  return true;
}

bool parse(const char* at, const char* end, Mapping& mapping) {
  Address ignored = 0;
  Address inode = 0;
  if (!number(at, end, 16, mapping.start) || !skip(at, end, '-') ||
      !number(at, end, 16, mapping.end) || !skip(at, end, ' ') || end - at < 4) {
    return false;
  }
  for (char& perm : mapping.perms) perm = *at++;
  if (!skip(at, end, ' ') || !number(at, end, 16, ignored) || !skip(at, end, ' ') ||
      !number(at, end, 16, ignored) || !skip(at, end, ':') || !number(at, end, 16, ignored) ||
      !skip(at, end, ' ') || !number(at, end, 10, inode)) {
    return false;
  }
  while (at < end && *at == ' ') ++at;
  mapping.file_backed = inode != 0;
  mapping.name = at;
  mapping.name_length = static_cast<std::size_t>(end - at);
  return true;
}

struct Range {
  Address from = 0;
  Address to = 0;
};

// How much of a mapping stays around what `needed` points into, each way: below the lowest
// address, the stack this process goes on growing into (its frames, a signal's frame with the
// CPU's whole state); above the highest, the rest of its thread's TLS block and frames. The
// rest of that mapping is the caller's all the same: the kernel merges an allocation of the
// caller's with a thread's stack or TLS block when it lands right next to it (a 256 MiB block
// was seen held so for a whole run). A multiple of every page size, so that bounds rounded to it
// are page bounds.
constexpr Address kKeptAroundNeeded = Address{1} << 20;
constexpr Address kLargestPage = Address{64} << 10;

struct CallersParts {
  Range below;  // under what is kept around `needed` (or the whole mapping, when it has none)
  Range above;
};

// The caller's parts of `mapping`: private anonymous memory that the clone copied and that this
// process does not use; empty when there is none. Kept, besides what is around what `needed`
// points into: shared mappings (not a copy), executable ones (a JIT's or a packed binary's code
// might be the code running here), inaccessible ones (guard pages hold nothing), the kernel's
// own ([vdso], [vvar]) and an anonymous mapping right after a file's (the zero-filled .bss tail
// of a loaded object: the C library's state, and ours) — but for the brk heap, which without
// address randomization starts right after the program's .bss, in the same mapping.
CallersParts callers_parts(const Mapping& mapping, bool follows_file, const Needed& needed) {
  if (mapping.file_backed) return {};
  if (mapping.perms[3] != 'p' || mapping.perms[2] == 'x') return {};
  if (mapping.perms[0] == '-' && mapping.perms[1] == '-') return {};
  const char* name = mapping.name;
  const std::size_t length = mapping.name_length;
  if (length != 0 && !equals(name, length, "[heap]") && !equals(name, length, "[stack]") &&
      !starts_with(name, length, "[anon:")) {
    return {};
  }
  Range part{mapping.start, mapping.end};
  if (follows_file) {
    if (caller_heap_start < mapping.start || caller_heap_start >= mapping.end) return {};
    part.from = caller_heap_start;
  }
  Address lowest = part.to;
  Address highest = part.from;
  for (const Address address : needed.addresses) {
    if (address == 0 || address < part.from || address >= part.to) continue;
    if (address < lowest) lowest = address;
    if (address > highest) highest = address;
  }
  if (lowest == part.to) return {part, {}};
  const Address keep_from = lowest - part.from > kKeptAroundNeeded
                                ? (lowest - kKeptAroundNeeded) & ~(kLargestPage - 1)
                                : part.from;
  const Address keep_to =
      part.to - highest > kKeptAroundNeeded
          ? (highest + kKeptAroundNeeded + kLargestPage - 1) & ~(kLargestPage - 1)
          : part.to;
  return {{part.from, keep_from > part.from ? keep_from : part.from},
          {keep_to < part.to ? keep_to : part.to, part.to}};
}

}  // namespace

void learn_caller_heap_start() {
  static std::once_flag learnt;
  std::call_once(learnt, [] {
    // The 47th field, counted after the command name's closing parenthesis (the name may hold
    // spaces and parentheses of its own).
    std::ifstream stat_file("/proc/self/stat");
    std::string line;
    if (!std::getline(stat_file, line)) return;
    const std::size_t name_end = line.rfind(')');
    if (name_end == std::string::npos) return;
    std::istringstream fields(line.substr(name_end + 1));
    std::string skipped;
    for (int index = 3; index < 47 && fields >> skipped; ++index) {
    }
    unsigned long long start = 0;
    if (fields >> start) caller_heap_start = static_cast<Address>(start);
  });
}

int open_own_maps() {
  if (!kLetsGoOfCallerMemory || has_guarded_control_stack()) return -1;
  const long fd = raw::call(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  // Moved out of the low numbers: the tool shares the init's table until its exec, and its
  // seccomp listener must land on the lowest free one under the tool's RLIMIT_NOFILE, which
  // may be as low as launch() allows (one above what the init holds).
  constexpr int kOutOfTheWay = 32;
  const long moved = raw::call(SYS_fcntl, fd, F_DUPFD_CLOEXEC, kOutOfTheWay);
  raw::call(SYS_close, fd);
  return moved < 0 ? -1 : static_cast<int>(moved);
}

void let_go_of_caller_memory(int maps_fd) {
  if (maps_fd < 0) return;
  const char* thread = static_cast<const char*>(__builtin_thread_pointer());
  int on_stack = 0;
#ifdef JAIL_HAS_RSEQ_OFFSET
  const Address rseq_area = reinterpret_cast<Address>(thread + __rseq_offset);
#else
  const Address rseq_area = 0;  // an older C library registers none
#endif
  const Needed needed{{reinterpret_cast<Address>(&on_stack), reinterpret_cast<Address>(thread),
                       rseq_area, reinterpret_cast<Address>(&errno), shadow_stack_pointer()}};
  char buffer[4096];
  std::size_t held = 0;   // an unfinished line, moved to the front
  bool skipping = false;  // in the rest of a line longer than the buffer, its head handled
  Address previous_end = 0;
  bool previous_file_backed = false;
  for (;;) {
    const long got = raw::call(SYS_read, maps_fd, buffer + held, sizeof buffer - held);
    if (got <= 0) break;  // the end, or an error: what is not read yet stays mapped
    const std::size_t filled = held + static_cast<std::size_t>(got);
    std::size_t begin = 0;
    for (;;) {
      std::size_t newline = begin;
      while (newline < filled && buffer[newline] != '\n') ++newline;
      const bool whole = newline < filled;
      if (!whole && !(begin == 0 && filled == sizeof buffer)) break;  // read the rest first
      Mapping mapping;
      if (!skipping && parse(buffer + begin, buffer + newline, mapping)) {
        const bool follows_file = previous_file_backed && mapping.start == previous_end;
        const CallersParts parts = callers_parts(mapping, follows_file, needed);
        for (const Range& part : {parts.below, parts.above}) {
          if (part.to > part.from) raw::call(SYS_munmap, part.from, part.to - part.from);
        }
        previous_end = mapping.end;
        previous_file_backed = mapping.file_backed;
      }
      skipping = !whole;
      begin = whole ? newline + 1 : filled;
      if (begin >= filled) break;
    }
    // The unfinished line to the front, byte by byte: the empty asm keeps the compiler from
    // making this loop a call to memmove.
    held = filled - begin;
    for (std::size_t i = 0; i < held; ++i) {
      buffer[i] = buffer[begin + i];
      asm volatile("" ::: "memory");
    }
  }
  raw::call(SYS_close, maps_fd);
}

}  // namespace jail::child
