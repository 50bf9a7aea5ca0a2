// run()'s reading of the tool's stdout and stderr under Stdio::pipe (jail/launch.hpp, RunOutput):
// both to their end, so the tool never blocks on a full pipe however much it writes.
#pragma once

#include <string>

#include "jail/launch.hpp"

namespace jail {

struct CapturedStream {
  std::string bytes;  // up to RunOutput::keep_bytes, unless a callback took the stream
  bool truncated = false;
};

struct Captured {
  CapturedStream out;
  CapturedStream err;
};

// Reads the Process's stdout and stderr until both reach end-of-file, or until the jail has
// ended and nothing more is waiting in them (a pipe still held open by something outside the
// jail must not keep run() forever). Throws jail::Error when a read fails.
[[nodiscard]] Captured drain_output(Process& process, const RunOutput& output);

}  // namespace jail
