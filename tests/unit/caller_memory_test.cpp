// A native jail's init and runsc's keeper are cloned from the caller, so each starts as a
// copy-on-write copy of all the caller's memory. Held for the whole run, that copy costs a host
// with a large heap that it keeps writing up to one more heap per run in flight: every page it
// writes is copied first. They let go of it once the tool runs (child/caller_memory.hpp).
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "child/caller_memory.hpp"
#include "jail/launch.hpp"
#include "library_support.hpp"

namespace {

using namespace std::chrono_literals;

constexpr std::size_t kHeapBytes = std::size_t{256} << 20;
// The init's and keeper's own: a few pages of stack, the C library's and jail's .bss.
constexpr long kMostAnonymousKiB = 16 * 1024;

// The anonymous memory mapped in `pid` (KiB), copied or still shared with the caller alike;
// -1 once the process is gone.
long anonymous_kib(pid_t pid) {
  std::ifstream rollup("/proc/" + std::to_string(pid) + "/smaps_rollup");
  std::string line;
  while (std::getline(rollup, line)) {
    if (line.rfind("Anonymous:", 0) == 0) {
      std::istringstream fields(line.substr(10));
      long kib = -1;
      fields >> kib;
      return kib;
    }
  }
  return -1;
}

// The two kinds of heap a host has: one large block (the C library maps it on its own) or many
// small ones (from the brk heap, "[heap]", when allocated on the main thread). Written, so that
// every page is the caller's own.
enum class Heap { one_block, small_blocks };

std::vector<std::unique_ptr<char[]>> allocate(Heap kind) {
  const std::size_t block = kind == Heap::one_block ? kHeapBytes : 4000;
  std::vector<std::unique_ptr<char[]>> blocks(kHeapBytes / block);
  for (auto& each : blocks) {
    each = std::make_unique<char[]>(block);
    std::fill_n(each.get(), block, 1);
  }
  return blocks;
}

// Launches `sleep 30` in a jail while the caller holds a written 256 MiB heap; the least
// anonymous memory the jail's first process was seen to hold within 10 s.
long least_anonymous_kib_of_the_jail(jail::Runtime runtime, Heap kind = Heap::one_block) {
  const std::vector<std::unique_ptr<char[]>> heap = allocate(kind);
  const std::size_t block = kHeapBytes / heap.size();
  jail::Spec spec = jail_test::shell("sleep 30");
  spec.runtime = runtime;
  jail::Process process = jail::launch(spec);
  long least = -1;
  for (const auto give_up = std::chrono::steady_clock::now() + 10s;
       std::chrono::steady_clock::now() < give_up; std::this_thread::sleep_for(20ms)) {
    const long now = anonymous_kib(process.pid());
    if (now >= 0 && (least < 0 || now < least)) least = now;
    if (least >= 0 && least < kMostAnonymousKiB) break;
  }
  process.kill(SIGKILL);
  (void)process.wait();
  EXPECT_TRUE(std::all_of(heap.begin(), heap.end(), [&](const auto& each) {
    return std::all_of(each.get(), each.get() + block, [](char c) { return c == 1; });
  })) << "the caller's heap changed under it";
  return least;
}

// Sanitized builds (scripts/sanitizers.sh) and architectures without raw system calls keep it,
// by design (kLetsGoOfCallerMemory in child/caller_memory.hpp).
#define SKIP_WHERE_THE_CALLERS_MEMORY_IS_KEPT()                                                \
  if (!jail::child::kLetsGoOfCallerMemory) {                                                   \
    GTEST_SKIP() << "this build keeps the caller's memory in the init: sanitizers shadow all " \
                    "memory with anonymous mappings, or no raw system calls on this machine";  \
  }

TEST(CallerMemory, ANativeJailsInitLetsGoOfTheCallersHeap) {
  SKIP_WHERE_THE_CALLERS_MEMORY_IS_KEPT();
  const long held = least_anonymous_kib_of_the_jail(jail::Runtime::native);
  EXPECT_GE(held, 0) << "the init's memory was never read";
  EXPECT_LT(held, kMostAnonymousKiB) << "the init holds " << held << " KiB of anonymous memory";
}

// Launched from a thread of the host's, as a plugin host does: the init runs on a copy of that
// thread's stack, with its TLS at the top of it, and keeps both.
TEST(CallerMemory, AnInitClonedFromAnotherThreadLetsGoToo) {
  SKIP_WHERE_THE_CALLERS_MEMORY_IS_KEPT();
  long held = -1;
  std::thread([&] { held = least_anonymous_kib_of_the_jail(jail::Runtime::native); }).join();
  EXPECT_GE(held, 0) << "the init's memory was never read";
  EXPECT_LT(held, kMostAnonymousKiB) << "the init holds " << held << " KiB of anonymous memory";
}

TEST(CallerMemory, TheBrkHeapIsLetGoOfToo) {
  SKIP_WHERE_THE_CALLERS_MEMORY_IS_KEPT();
  const long held = least_anonymous_kib_of_the_jail(jail::Runtime::native, Heap::small_blocks);
  EXPECT_GE(held, 0) << "the init's memory was never read";
  EXPECT_LT(held, kMostAnonymousKiB) << "the init holds " << held << " KiB of anonymous memory";
}

// Without address randomization (setarch -R, a host under gdb) the brk heap starts right after
// the program's .bss, in the same mapping, which is otherwise kept whole as a loaded object's
// data. This test runs the one above in a copy of this program started so.
TEST(CallerMemory, TheBrkHeapIsLetGoOfWithoutAddressRandomization) {
  SKIP_WHERE_THE_CALLERS_MEMORY_IS_KEPT();
  const std::string command = "setarch \"$(uname -m)\" -R /proc/" + std::to_string(::getpid()) +
                              "/exe --gtest_filter=CallerMemory.TheBrkHeapIsLetGoOfToo" +
                              " > /dev/null 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << "failed without address randomization: " << command;
}

// Where a block of the caller's lands right next to a thread's stack, the kernel makes the two
// one mapping; the child, which runs on a copy of that stack, keeps only the stack around where
// it runs. Made so here: the launching thread's stack is the top of a mapping whose 256 MiB
// below it are written heap.
TEST(CallerMemory, AHeapInTheSameMappingAsTheThreadsStackIsLetGoOf) {
  SKIP_WHERE_THE_CALLERS_MEMORY_IS_KEPT();
  constexpr std::size_t kStackBytes = std::size_t{8} << 20;
  void* const region = ::mmap(nullptr, kHeapBytes + kStackBytes, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(region, MAP_FAILED);
  char* const heap = static_cast<char*>(region);
  std::fill_n(heap, kHeapBytes, 1);
  pthread_attr_t attributes;
  ASSERT_EQ(::pthread_attr_init(&attributes), 0);
  ASSERT_EQ(::pthread_attr_setstack(&attributes, heap + kHeapBytes, kStackBytes), 0);
  struct Run {
    long held = -1;
    static void* launch(void* run) {
      static_cast<Run*>(run)->held = least_anonymous_kib_of_the_jail(jail::Runtime::native);
      return nullptr;
    }
  } run;
  pthread_t thread;
  ASSERT_EQ(::pthread_create(&thread, &attributes, Run::launch, &run), 0);
  ASSERT_EQ(::pthread_join(thread, nullptr), 0);
  ::pthread_attr_destroy(&attributes);
  EXPECT_TRUE(std::all_of(heap, heap + kHeapBytes, [](char c) { return c == 1; }))
      << "the caller's heap changed under it";
  ::munmap(region, kHeapBytes + kStackBytes);
  EXPECT_GE(run.held, 0) << "the init's memory was never read";
  EXPECT_LT(run.held, kMostAnonymousKiB)
      << "the init holds " << run.held << " KiB of anonymous memory";
}

TEST(CallerMemory, RunscsKeeperLetsGoOfTheCallersHeap) {
  SKIP_WHERE_THE_CALLERS_MEMORY_IS_KEPT();
  if (::geteuid() != 0 || !std::filesystem::exists("/usr/bin/runsc")) {
    GTEST_FAIL() << "needs root and runsc (scripts/install-deps.sh installs it); CI has both";
  }
  const long held = least_anonymous_kib_of_the_jail(jail::Runtime::runsc);
  EXPECT_GE(held, 0) << "the keeper's memory was never read";
  EXPECT_LT(held, kMostAnonymousKiB) << "the keeper holds " << held << " KiB of anonymous memory";
}

}  // namespace
