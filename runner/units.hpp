// Sizes and durations as people write them on a command line: "64M", "1.5G", "30s", "2m".
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace jail::runner {

// Why parse_size gave nothing.
enum class SizeProblem { not_a_size, too_large, not_whole };

// Bytes from "4096", "512k", "64M", "1.5G", "1T" (powers of 1024; "KiB"/"MB" spellings too).
// Nothing for another spelling, a value past 2^64, or one that is not a whole number of bytes;
// `problem`, when given, says which.
[[nodiscard]] std::optional<std::uint64_t> parse_size(const std::string& text,
                                                      SizeProblem* problem = nullptr);

// What to say of a size that parse_size refused, for flag `flag`.
[[nodiscard]] std::string size_problem_text(SizeProblem problem);

// "512 B", "1.5 KiB", "64.0 MiB", "2.0 GiB": a size for people to read.
[[nodiscard]] std::string human_size(std::uint64_t bytes);

// Why parse_duration gave nothing.
enum class DurationProblem { not_a_duration, not_whole_ms };

// Milliseconds from "1500ms", "2s", "1.5m", "1h", or a bare number of seconds. Nothing for another
// spelling, or a time that is not a whole number of milliseconds ("0.5ms"), which jail's limits
// could only round; `problem`, when given, says which.
[[nodiscard]] std::optional<std::chrono::milliseconds> parse_duration(
    const std::string& text, DurationProblem* problem = nullptr);

// What to say of a duration that parse_duration refused.
[[nodiscard]] std::string duration_problem_text(DurationProblem problem);

}  // namespace jail::runner
