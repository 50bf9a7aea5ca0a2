// Sizes and durations as people write them on a command line: "64M", "1.5G", "30s", "2m".
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace jail::runner {

// Bytes from "4096", "512k", "64M", "1.5G", "1T" (powers of 1024; "KiB"/"MB" spellings too).
[[nodiscard]] std::optional<std::uint64_t> parse_size(const std::string& text);

// Milliseconds from "1500ms", "2s", "1.5m", "1h", or a bare number of seconds.
[[nodiscard]] std::optional<std::chrono::milliseconds> parse_duration(const std::string& text);

}  // namespace jail::runner
