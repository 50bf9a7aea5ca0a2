#include "runsc/start_gate.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "jail/error.hpp"

namespace jail {

RunscStartGate::RunscStartGate(std::filesystem::path path) : path_(std::move(path)) {
  if (::mkfifo(path_.c_str(), 0600) != 0) {
    throw Error(
        "runsc", errno,
        fmt::format("cannot make runsc's start gate {}: {}", path_.string(), std::strerror(errno)));
  }
  fifo_.reset(::open(path_.c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW));
  if (!fifo_.valid()) {
    throw Error(
        "runsc", errno,
        fmt::format("cannot open runsc's start gate {}: {}", path_.string(), std::strerror(errno)));
  }
}

void RunscStartGate::open() {
  if (::unlink(path_.c_str()) != 0) {
    throw Error("runsc", errno,
                fmt::format("cannot remove runsc's start gate {}: {}", path_.string(),
                            std::strerror(errno)));
  }
  // Reopening an O_PATH fd through /proc opens the FIFO itself, now that no path leads to it.
  // Non-blocking: a reader's open does not wait for writers.
  const std::string reopen = fmt::format("/proc/self/fd/{}", fifo_.get());
  reader_.reset(::open(reopen.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!reader_.valid()) {
    throw Error("runsc", errno,
                fmt::format("cannot open runsc's start gate: {} (is /proc mounted?)",
                            std::strerror(errno)));
  }
  fifo_.reset();
}

}  // namespace jail
