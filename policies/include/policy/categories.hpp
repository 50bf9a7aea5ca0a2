// Every x86_64 syscall in one category a reviewer asks about (network, processes, files, …):
// the rows of `jail policy diff --summary` and `jail policy explain --capabilities`.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jail::policy {

enum class Category : std::uint8_t {
  network,     // sockets and what travels over them
  processes,   // create, run, wait for, schedule, trace other processes and threads
  files,       // files, directories, descriptors, and waiting on descriptors
  privileges,  // user and group ids, capabilities, seccomp, Landlock, LSM attributes
  ipc,         // pipes, socketpair, SysV and POSIX IPC, futexes, eventfd
  time,        // clocks, timers, sleeping
  memory,      // mappings, protections, locking, NUMA placement
  signals,     // sending, handling and waiting for signals
  kernel,      // modules, bpf, perf, kexec, mounts and namespaces, keyrings, io_uring, …
  system,      // the machine: reboot, swap, host names, accounting, unimplemented calls
};

inline constexpr std::array<Category, 10> kCategories = {
    Category::network, Category::processes, Category::files,  Category::privileges,
    Category::ipc,     Category::time,      Category::memory, Category::signals,
    Category::kernel,  Category::system};

// The JSON key: "network", "processes", …, "ipc", "kernel", "system".
[[nodiscard]] std::string_view to_string(Category category);
// The name a reviewer reads: "network", …, "IPC", "kernel interfaces", "system".
[[nodiscard]] std::string_view title(Category category);

// Nothing for a name the table does not hold (a test keeps every known syscall in it).
[[nodiscard]] std::optional<Category> category_of(std::string_view syscall);
// The known x86_64 syscalls of one category, by name.
[[nodiscard]] std::vector<std::string> syscalls_in(Category category);

}  // namespace jail::policy
