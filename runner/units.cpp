#include "units.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace jail::runner {
namespace {

// Splits "1.5G" into 1.5 and "G"; nullopt when the number part is missing or negative.
std::optional<std::pair<double, std::string>> split_number(const std::string& text) {
  if (text.empty() ||
      !(std::isdigit(static_cast<unsigned char>(text.front())) || text.front() == '.')) {
    return std::nullopt;
  }
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(value) || value < 0) return std::nullopt;
  std::string unit(end);
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return std::make_pair(value, unit);
}

}  // namespace

std::optional<std::uint64_t> parse_size(const std::string& text) {
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
  if (bytes >= 18446744073709551615.0) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

std::optional<std::chrono::milliseconds> parse_duration(const std::string& text) {
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
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(ms)));
}

}  // namespace jail::runner
