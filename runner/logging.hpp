// jail's own messages: spdlog on stderr (or --log-file), text or one JSON object a line; never on
// stdout, which belongs to the tool.
#pragma once

#include <string>
#include <vector>

namespace jail::runner {

enum class LogFormat { text, json };

struct LogOptions {
  int verbosity = 0;  // -v count
  bool quiet = false;
  std::string file;  // empty: stderr
  int fd = -1;       // --log-fd: written as it is (a pipe, socket or file the caller opened)
  LogFormat format = LogFormat::text;
  // Said while the flags were read, before there was a logger that knows -q, --log-file and
  // --log-format: setup_logging says them through the one it makes.
  std::vector<std::string> warnings;
  std::vector<std::string> notes;  // the same, for -v only
};

// Throws std::runtime_error when the log file cannot be opened (never creating directories).
void setup_logging(const LogOptions& options);

}  // namespace jail::runner
