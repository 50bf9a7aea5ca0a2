// Upper bounds on time in tests, stretched by JAIL_TEST_TIME_SCALE: sanitizer builds and a loaded
// 2-core machine run slower, so scripts/sanitizers.sh raises the factor. Lower bounds (a timeout
// fired no earlier than asked) are never scaled.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace jail_test {

// JAIL_TEST_TIME_SCALE as a number, 1 when unset. Anything but a positive finite number ends the
// test program: a typo must not quietly leave the limits as they were.
inline double time_scale() {
  static const double scale = [] {
    const char* text = std::getenv("JAIL_TEST_TIME_SCALE");
    if (text == nullptr) return 1.0;
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    if (end == text || *end != '\0' || !std::isfinite(value) || value <= 0) {
      std::fprintf(stderr, "JAIL_TEST_TIME_SCALE=\"%s\": not a positive number (unset it for 1)\n",
                   text);
      std::abort();
    }
    return value;
  }();
  return scale;
}

// `limit` stretched by time_scale(): an upper bound on a duration, or a deadline.
template <typename Rep, typename Period>
std::chrono::milliseconds scaled(std::chrono::duration<Rep, Period> limit) {
  const double ms = std::chrono::duration<double, std::milli>(limit).count() * time_scale();
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(ms)));
}

// The same for a limit held as a plain number (seconds, wall_ms).
inline double scaled(double limit) {
  return limit * time_scale();
}

}  // namespace jail_test
