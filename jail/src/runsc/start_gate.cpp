#include "runsc/start_gate.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

namespace {

// Appends what `fd` holds now to `text`, up to `max` bytes in all.
void append_what_is_there(int fd, std::string& text, std::size_t max) {
  char buffer[4096];
  while (text.size() < max) {
    const ssize_t n = ::read(fd, buffer, std::min(sizeof buffer, max - text.size()));
    if (n > 0) {
      text.append(buffer, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return;  // nothing more now (EAGAIN), or the end
    }
  }
}

}  // namespace

std::string RunscStartGate::take_written(std::size_t max) {
  std::string text;
  if (reader_.valid()) append_what_is_there(reader_.get(), text, max);
  // The gofer and the sandbox, started after the gate went, log to a plain file of that name.
  const UniqueFd later(::open(path_.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (later.valid()) append_what_is_there(later.get(), text, max);
  return text;
}

}  // namespace jail
