#include "output_relay.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <spdlog/spdlog.h>

#include "log.hpp"
#include "write_all.hpp"

namespace jail {

OutputRelay::OutputRelay(UniqueFd stdout_source, UniqueFd stderr_source, int stdout_sink,
                         int stderr_sink, std::uint64_t cap)
    : streams_{Stream{std::move(stdout_source), stdout_sink},
               Stream{std::move(stderr_source), stderr_sink}},
      left_(cap),
      buffer_(std::make_unique<std::array<char, 64 * 1024>>()) {
  for (auto& stream : streams_) {
    ::fcntl(stream.source.get(), F_SETFL, ::fcntl(stream.source.get(), F_GETFL) | O_NONBLOCK);
  }
}

OutputRelay::Moved OutputRelay::move_chunk(Stream& stream) {
  const std::size_t want =
      static_cast<std::size_t>(std::min<std::uint64_t>(buffer_->size(), left_));
  if (stream.splice) {
    const ssize_t n =
        ::splice(stream.source.get(), nullptr, stream.sink, nullptr, want, SPLICE_F_NONBLOCK);
    if (n > 0) {
      left_ -= static_cast<std::uint64_t>(n);
      return Moved::some;
    }
    if (n == 0) return Moved::ended;
    if (errno == EAGAIN) {
      // Either the tool has written nothing yet or the caller's side is full; only the second
      // needs a different wait.
      int queued = 0;
      stream.sink_full = ::ioctl(stream.source.get(), FIONREAD, &queued) == 0 && queued > 0;
      return Moved::none_yet;
    }
    if (errno == EINTR) return Moved::none_yet;
    if (errno != EINVAL) return Moved::ended;
    stream.splice = false;  // a sink without splice support (a terminal, some files)
  }
  const ssize_t n = ::read(stream.source.get(), buffer_->data(), want);
  if (n == 0) return Moved::ended;
  if (n < 0) return errno == EAGAIN || errno == EINTR ? Moved::none_yet : Moved::ended;
  // A failure means the caller's side is gone: the bytes are dropped, the cap still counts.
  (void)write_all(stream.sink, buffer_->data(), static_cast<std::size_t>(n));
  left_ -= static_cast<std::uint64_t>(n);
  return Moved::some;
}

void OutputRelay::cut() {
  if (truncated_) return;
  truncated_ = true;
  jail::log().info("the tool's output reached the cap; its stdout and stderr are closed");
  for (auto& stream : streams_) stream.source.reset();
}

// At the cap, output is "cut" only once the tool tries to write more than the cap: a tool that
// wrote exactly the cap and stopped was not truncated.
static bool has_pending(int fd) {
  int queued = 0;
  return ::ioctl(fd, FIONREAD, &queued) == 0 && queued > 0;
}

pollfd OutputRelay::poll_entry(int stream_index) const {
  const Stream& stream = streams_[static_cast<std::size_t>(stream_index)];
  if (!stream.source.valid()) return {-1, 0, 0};
  if (stream.sink_full) return {stream.sink, POLLOUT, 0};
  return {stream.source.get(), POLLIN, 0};
}

void OutputRelay::on_readable(int stream_index) {
  Stream& stream = streams_[static_cast<std::size_t>(stream_index)];
  stream.sink_full = false;
  if (!stream.source.valid()) return;
  if (left_ == 0) {
    if (has_pending(stream.source.get())) {
      cut();
    } else {
      stream.source.reset();  // end of file: nothing was waiting
    }
    return;
  }
  if (move_chunk(stream) == Moved::ended) stream.source.reset();
}

void OutputRelay::drain() {
  for (auto& stream : streams_) {
    while (stream.source.valid() && left_ > 0 && move_chunk(stream) == Moved::some) {
    }
    if (stream.source.valid() && left_ == 0 && has_pending(stream.source.get())) cut();
  }
}

}  // namespace jail
