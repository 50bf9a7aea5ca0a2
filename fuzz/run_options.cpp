// libFuzzer target: the run-flag parser (CLI11 flags → jail::Spec). The input is split at NUL
// bytes into arguments placed before `--`; the command is `true`. Every outcome is a Spec, a
// UsageError or help text; nothing crashes, hangs or trips a sanitizer. Other exceptions are
// tolerated (main turns them into exit 125) but counted on stderr at exit.
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "run_options.hpp"

namespace {

long unexpected_exceptions = 0;

void print_unexpected() {
  if (unexpected_exceptions > 0) {
    std::fprintf(stderr, "run_options: %ld inputs threw something other than UsageError\n",
                 unexpected_exceptions);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);  // --pass-env warnings would flood the run
  std::atexit(print_unexpected);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> options;
  std::string current;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == '\0') {
      options.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (!current.empty()) options.push_back(current);
  if (options.size() > 64) return 0;
  try {
    (void)jail::runner::parse_run_options(options, {"true"});
  } catch (const jail::runner::UsageError&) {
  } catch (const jail::runner::HelpRequested&) {
  } catch (const std::exception& e) {
    if (++unexpected_exceptions <= 5) std::fprintf(stderr, "run_options: %s\n", e.what());
  }
  return 0;
}
