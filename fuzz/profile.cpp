// libFuzzer target: the TOML profile loader (--profile FILE). The input is the file's text.
// Every outcome is a Profile or a UsageError naming file:line:col; nothing crashes, hangs or
// trips a sanitizer. Other exceptions are tolerated but counted on stderr at exit.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "profile.hpp"
#include "run_options.hpp"

namespace {

long unexpected_exceptions = 0;

void print_unexpected() {
  if (unexpected_exceptions > 0) {
    std::fprintf(stderr, "profile: %ld inputs threw something other than UsageError\n",
                 unexpected_exceptions);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::atexit(print_unexpected);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)jail::runner::parse_profile(text, "/fuzz/profile.toml");
  } catch (const jail::runner::UsageError&) {
  } catch (const std::exception& e) {
    if (++unexpected_exceptions <= 5) std::fprintf(stderr, "profile: %s\n", e.what());
  }
  return 0;
}
