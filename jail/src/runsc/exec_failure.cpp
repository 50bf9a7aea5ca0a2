#include "runsc/exec_failure.hpp"

#include <array>
#include <cerrno>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace jail {
namespace {

// gVisor's own words (runsc/specutils, pkg/sentry/loader) for the exec step's failures.
constexpr std::array kExecSteps = {std::string_view("error finding executable "),
                                   std::string_view("failed to load ")};

// Go's texts for the errnos an exec can fail with, as gVisor passes them on.
constexpr std::array<std::pair<std::string_view, int>, 6> kErrnoTexts = {{
    {"no such file or directory", ENOENT},
    {"not a directory", ENOENT},
    {"permission denied", EACCES},
    {"is a directory", EACCES},
    {"exec format error", ENOEXEC},
    {"text file busy", ETXTBSY},
}};

}  // namespace

std::optional<int> exec_errno_in_runsc_error(std::string_view text) {
  // The last line that names the exec step: runsc repeats its error (log and stderr).
  std::optional<int> found;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    // runsc's --log holds one JSON object per line, its words in "msg"; stderr the words alone.
    const nlohmann::json entry = nlohmann::json::parse(line, nullptr, false);
    std::string msg;
    if (entry.is_object() && entry.contains("msg") && entry["msg"].is_string()) {
      msg = entry["msg"].get<std::string>();
      line = msg;
    }
    bool exec_step = false;
    for (const std::string_view step : kExecSteps) exec_step |= line.find(step) != line.npos;
    if (!exec_step) continue;
    for (const auto& [words, err] : kErrnoTexts) {
      if (line.ends_with(words)) found = err;
    }
  }
  return found;
}

}  // namespace jail
