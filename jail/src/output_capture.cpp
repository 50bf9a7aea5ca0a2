#include "output_capture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <functional>
#include <string_view>

#include <fmt/format.h>

#include "jail/error.hpp"

namespace jail {
namespace {

// How often a quiet pipe is checked against the jail's end: only a pipe held open by something
// outside the jail (a process the host forked meanwhile) ever waits this long.
constexpr int kEndCheckMs = 100;

struct Stream {
  int fd;
  const char* name;
  const std::function<void(std::string_view)>& callback;
  CapturedStream& into;
  bool open = true;
};

void take(Stream& stream, std::string_view chunk, std::uint64_t keep_bytes) {
  if (stream.callback) {
    stream.callback(chunk);
    return;
  }
  const std::uint64_t room =
      keep_bytes - std::min<std::uint64_t>(keep_bytes, stream.into.bytes.size());
  if (chunk.size() > room) stream.into.truncated = true;
  stream.into.bytes.append(
      chunk.substr(0, static_cast<std::size_t>(std::min<std::uint64_t>(room, chunk.size()))));
}

// Reads what is waiting now; closes the stream at end-of-file.
void read_available(Stream& stream, std::uint64_t keep_bytes) {
  std::array<char, 64 * 1024> buffer;
  while (stream.open) {
    const ssize_t n = ::read(stream.fd, buffer.data(), buffer.size());
    if (n > 0) {
      take(stream, std::string_view(buffer.data(), static_cast<std::size_t>(n)), keep_bytes);
      continue;
    }
    if (n == 0) {
      stream.open = false;
      return;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN) return;
    const int err = errno;
    throw Error("output", err,
                fmt::format("cannot read the tool's {}: {}", stream.name, std::strerror(err)));
  }
}

}  // namespace

Captured drain_output(Process& process, const RunOutput& output) {
  Captured captured;
  std::array<Stream, 2> streams{
      Stream{process.stdout_fd(), "stdout", output.on_stdout, captured.out},
      Stream{process.stderr_fd(), "stderr", output.on_stderr, captured.err}};
  for (Stream& stream : streams) {
    // The caller's ends belong to this run alone: non-blocking, so a last look after the jail's
    // end takes what is there and returns.
    const int flags = ::fcntl(stream.fd, F_GETFL);
    if (stream.fd < 0 || flags < 0 || ::fcntl(stream.fd, F_SETFL, flags | O_NONBLOCK) < 0) {
      stream.open = false;
    }
  }
  const auto any_open = [&] { return streams[0].open || streams[1].open; };
  while (any_open()) {
    std::array<pollfd, 2> fds{};
    for (std::size_t i = 0; i < streams.size(); ++i) {
      fds[i] = {streams[i].open ? streams[i].fd : -1, POLLIN, 0};
    }
    const int ready = ::poll(fds.data(), fds.size(), kEndCheckMs);
    if (ready < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      throw Error("output", err,
                  fmt::format("cannot wait for the tool's output: {}", std::strerror(err)));
    }
    if (ready == 0) {
      if (process.running()) continue;
      // The jail has ended: what its processes wrote is in the pipes already.
      for (Stream& stream : streams) read_available(stream, output.keep_bytes);
      break;
    }
    for (std::size_t i = 0; i < streams.size(); ++i) {
      if (fds[i].revents != 0) read_available(streams[i], output.keep_bytes);
    }
  }
  return captured;
}

}  // namespace jail
