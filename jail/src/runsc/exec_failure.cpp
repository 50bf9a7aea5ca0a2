#include "runsc/exec_failure.hpp"

#include <array>
#include <cerrno>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace jail {
namespace {

// gVisor's own words (runsc/specutils, pkg/sentry/loader) for the exec step's failures.
constexpr std::string_view kFinding = "error finding executable ";
constexpr std::string_view kLoading = "failed to load ";

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

std::optional<RunscExecFailure> exec_failure_in_runsc_error(std::string_view text) {
  // The last line that names the exec step: runsc repeats its error (log and stderr).
  std::optional<RunscExecFailure> found;
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
    const bool loading = line.find(kLoading) != line.npos;
    if (!loading && line.find(kFinding) == line.npos) continue;
    for (const auto& [words, err] : kErrnoTexts) {
      if (line.ends_with(words)) found = RunscExecFailure{err, loading};
    }
  }
  return found;
}

}  // namespace jail
