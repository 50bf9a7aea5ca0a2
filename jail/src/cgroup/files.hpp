// Small, errno-preserving file operations on cgroupfs, and the parsing of its text formats.
// Internal to jail/src/cgroup.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jail::cgroup::files {

// "ENOENT (No such file or directory)".
std::string errno_text(int err);

// Whole file, or std::nullopt with errno set.
std::optional<std::string> read(const std::string& path);
// One write(2) of `value`: cgroupfs parses each write as a whole, so it must not be split.
// Returns 0 or the errno of open/write.
int write(const std::string& path, std::string_view value);
bool exists(const std::string& path);

// Names of the subdirectories of `dir` starting with `prefix` (all when empty).
std::vector<std::string> subdirs(const std::string& dir, std::string_view prefix = {});

// The pids listed in a cgroup.procs file; empty if it cannot be read.
std::vector<pid_t> procs(const std::string& dir);

// A cgroup name nobody can guess: jail-<pid>-<16 hex digits from getrandom>.
std::string unique_name();

// Removes the empty cgroups under `parent` that dead jails left (see stale.cpp).
void remove_stale_jails(const std::string& parent);

// Parsing, kept free of I/O so tests can feed it strings.
// The value of `key` in a "key value\n" file (cpu.stat, memory.events, pids.events, ...).
std::optional<uint64_t> keyed(std::string_view text, std::string_view key);
// A single-number file ("max" counts as no number).
std::optional<uint64_t> number(std::string_view text);
// The words of a space-separated list (cgroup.controllers, cgroup.subtree_control).
std::vector<std::string> words(std::string_view text);

// Polls `done` every few ms until it returns true or `limit` has passed; returns its last value.
template <typename Done>
bool poll_until(std::chrono::milliseconds limit, Done done);

}  // namespace jail::cgroup::files

#include <thread>

namespace jail::cgroup::files {

template <typename Done>
bool poll_until(std::chrono::milliseconds limit, Done done) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace jail::cgroup::files
