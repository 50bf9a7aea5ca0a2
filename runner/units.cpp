#include "units.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace jail::runner {
namespace {

// Splits "1.5G" into 1.5 and "g": digits with at most one '.', then letters only (no sign, no
// exponent, no hex, which strtod alone would take: "0x10" and "1e9" are not sizes people write).
std::optional<std::pair<double, std::string>> split_number(const std::string& text) {
  std::size_t end = 0;
  bool digits = false, point = false;
  for (; end < text.size(); ++end) {
    const char c = text[end];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits = true;
    } else if (c == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  if (!digits) return std::nullopt;
  std::string unit = text.substr(end);
  for (char& c : unit) {
    if (!std::isalpha(static_cast<unsigned char>(c))) return std::nullopt;
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  const double value = std::strtod(text.substr(0, end).c_str(), nullptr);
  if (!std::isfinite(value)) return std::nullopt;
  return std::make_pair(value, unit);
}

}  // namespace

std::optional<std::uint64_t> parse_size(const std::string& text, SizeProblem* problem) {
  if (problem != nullptr) *problem = SizeProblem::not_a_size;
  const auto parts = split_number(text);
  if (!parts) return std::nullopt;
  const auto& [value, unit] = *parts;
  double multiplier = 0;
  if (unit.empty() || unit == "b")
    multiplier = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib")
    multiplier = 1024.0;
  else if (unit == "m" || unit == "mb" || unit == "mib")
    multiplier = 1024.0 * 1024;
  else if (unit == "g" || unit == "gb" || unit == "gib")
    multiplier = 1024.0 * 1024 * 1024;
  else if (unit == "t" || unit == "tb" || unit == "tib")
    multiplier = 1024.0 * 1024 * 1024 * 1024;
  else
    return std::nullopt;
  const double bytes = value * multiplier;
  if (bytes >= 18446744073709551615.0) {
    if (problem != nullptr) *problem = SizeProblem::too_large;
    return std::nullopt;
  }
  // "1.5k" is 1536 bytes; "1.9" bytes (or processes, for --rlimit nproc) is not a count.
  if (bytes != std::floor(bytes)) {
    if (problem != nullptr) *problem = SizeProblem::not_whole;
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(bytes);
}

std::string size_problem_text(SizeProblem problem) {
  switch (problem) {
    case SizeProblem::too_large:
      return "too large (past 2^64 bytes)";
    case SizeProblem::not_whole:
      return "not a whole number (of bytes, or of what is counted)";
    case SizeProblem::not_a_size:
      break;
  }
  return "not a size like 64M or 1G";
}

std::optional<std::chrono::milliseconds> parse_duration(const std::string& text,
                                                        DurationProblem* problem) {
  if (problem != nullptr) *problem = DurationProblem::not_a_duration;
  const auto parts = split_number(text);
  if (!parts) return std::nullopt;
  const auto& [value, unit] = *parts;
  double ms = 0;
  if (unit == "ms")
    ms = value;
  else if (unit.empty() || unit == "s")
    ms = value * 1000;
  else if (unit == "m" || unit == "min")
    ms = value * 60'000;
  else if (unit == "h")
    ms = value * 3'600'000;
  else
    return std::nullopt;
  if (ms > 1e15) return std::nullopt;
  const double whole = std::round(ms);
  // A relative tolerance: "1.1s" is 1100.0000000000002 ms in binary floating point.
  if (std::fabs(ms - whole) > 1e-9 * std::max(1.0, ms)) {
    if (problem != nullptr) *problem = DurationProblem::not_whole_ms;
    return std::nullopt;
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(whole));
}

std::string duration_problem_text(DurationProblem problem) {
  if (problem == DurationProblem::not_whole_ms) {
    return "not a whole number of milliseconds, which is what jail's time limits count in";
  }
  return "not a duration like 500ms, 30s or 2m";
}

std::string human_size(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < (1u << 20)) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024);
  if (bytes < (1u << 30)) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1 << 30));
}

}  // namespace jail::runner
