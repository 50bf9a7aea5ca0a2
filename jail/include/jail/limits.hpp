// jail::Limits — what a jailed tool may use. Nothing is limited unless asked for (no hidden
// time limit, no file-size cap, no address-space cap that breaks JITs); core dumps are off.
#pragma once

#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jail {

// Any setrlimit resource, for the limits without a flag of their own (--rlimit NAME=VALUE).
struct Rlimit {
  int resource = 0;  // RLIMIT_*
  rlim_t soft = 0;
  rlim_t hard = 0;
};

struct Limits {
  // Enforced by the jail's cgroup.
  std::optional<std::uint64_t> memory_bytes;  // RAM of the whole jail; swap off
  std::optional<std::uint64_t> pids;          // processes and threads of the whole jail
  std::optional<double> cpus;                 // CPU bandwidth in cores (0.5 = half a core)

  // Enforced by the supervisor: SIGTERM to the tool, SIGKILL to everything after the grace.
  std::optional<std::chrono::milliseconds> timeout;
  std::chrono::milliseconds kill_grace{2000};

  // Enforced by the kernel per process (rlimits, set in the tool right before execve).
  std::optional<std::chrono::seconds> cpu_time;  // RLIMIT_CPU
  std::optional<std::uint64_t> max_file_size;    // RLIMIT_FSIZE: EFBIG (or SIGXFSZ) beyond
  std::optional<std::uint64_t> max_open_files;   // RLIMIT_NOFILE
  std::vector<Rlimit> rlimits;
  bool core_dumps = false;  // RLIMIT_CORE 0 unless true

  [[nodiscard]] bool needs_cgroup() const { return memory_bytes || pids || cpus; }
};

// Which limit ended (or shaped) the run.
// `output`: --max-output cut the tool's stdout/stderr (the tool got EPIPE or SIGPIPE).
// tmpfs: a writable tmpfs of the jail (/tmp, --tmpfs) ended full; the tool's writes there failed.
// open_files: a process of the jail ended holding as many descriptors as RLIMIT_NOFILE allows
// (--max-open-files), so its next open failed with EMFILE (best effort: seen at exit_group).
// dry_run_size: a dry run's layers filled DryRun::size_bytes; the tool's writes there failed.
enum class Limit {
  memory,
  pids,
  wall_time,
  cpu_time,
  file_size,
  output,
  tmpfs,
  open_files,
  dry_run_size
};

[[nodiscard]] std::string_view to_string(Limit);

// The rlimit of `resource` (RLIMIT_*) the tool runs under, as jail sets it: from --cpu-time,
// --max-file-size, --max-open-files or core_dumps, overridden by an --rlimit entry (the last
// setting of a resource is the one in force). nullopt when it is not set, or its soft value is
// unlimited: then nothing is enforced at the soft value.
[[nodiscard]] std::optional<Rlimit> rlimit_in_force(const Limits& limits, int resource);

// The rlimit of `resource` jail sets for the tool, soft and hard as set (unlimited included): the
// flags' and --rlimit's as above, and jail's defaults where neither sets it (core 0 unless
// core_dumps; msgqueue a quarter of the calling process's own). nullopt: jail sets none, and the
// tool inherits the caller's.
[[nodiscard]] std::optional<Rlimit> rlimit_jail_sets(const Limits& limits, int resource);

// "cpu" → RLIMIT_CPU, "nofile" → RLIMIT_NOFILE, …; nullopt for an unknown name.
[[nodiscard]] std::optional<int> rlimit_resource(std::string_view name);
[[nodiscard]] std::string_view rlimit_name(int resource);
// RLIMIT_CPU → "RLIMIT_CPU", as the OCI runtime spec and the kernel's headers spell it.
[[nodiscard]] std::string rlimit_constant_name(int resource);

}  // namespace jail
