#include "output_relay.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <spdlog/spdlog.h>

#include "log.hpp"

namespace jail {
namespace {

// At the cap, output is "cut" only once the tool tries to write more than the cap: a tool that
// wrote exactly the cap and stopped was not truncated.
bool has_pending(int fd) {
  int queued = 0;
  return ::ioctl(fd, FIONREAD, &queued) == 0 && queued > 0;
}

}  // namespace

OutputRelay::OutputRelay(UniqueFd stdout_source, UniqueFd stderr_source, int stdout_sink,
                         int stderr_sink, std::uint64_t cap)
    : streams_{Stream{std::move(stdout_source), CallerSink(stdout_sink)},
               Stream{std::move(stderr_source), CallerSink(stderr_sink)}},
      left_(cap),
      buffer_(std::make_unique<std::array<char, 64 * 1024>>()) {
  for (auto& stream : streams_) {
    ::fcntl(stream.source.get(), F_SETFL, ::fcntl(stream.source.get(), F_GETFL) | O_NONBLOCK);
    stream.splice = stream.sink.splices();
  }
}

void OutputRelay::sink_gone(Stream& stream) {
  stream.pending.clear();
  stream.sink_full = false;
  stream.source.reset();
}

OutputRelay::Moved OutputRelay::flush(Stream& stream) {
  const ssize_t n = stream.sink.write_some(stream.pending.data(), stream.pending.size());
  if (n < 0) {
    sink_gone(stream);
    return Moved::some;
  }
  stream.pending.erase(0, static_cast<std::size_t>(n));
  stream.sink_full = !stream.pending.empty();
  return n > 0 ? Moved::some : Moved::none_yet;
}

OutputRelay::Moved OutputRelay::move_chunk(Stream& stream) {
  if (!stream.pending.empty()) return flush(stream);
  const std::size_t want =
      static_cast<std::size_t>(std::min<std::uint64_t>(buffer_->size(), left_));
  if (stream.splice) {
    const ssize_t n =
        ::splice(stream.source.get(), nullptr, stream.sink.fd(), nullptr, want, SPLICE_F_NONBLOCK);
    if (n > 0) {
      left_ -= static_cast<std::uint64_t>(n);
      return Moved::some;
    }
    if (n == 0) return Moved::ended;
    if (errno == EAGAIN) {
      // Either the tool has written nothing yet or the caller's side is full; only the second
      // needs a different wait.
      stream.sink_full = has_pending(stream.source.get());
      return Moved::none_yet;
    }
    if (errno == EINTR) return Moved::none_yet;
    if (errno != EINVAL) {
      sink_gone(stream);
      return Moved::some;
    }
    stream.splice = false;  // a sink without splice support
  }
  const ssize_t n = ::read(stream.source.get(), buffer_->data(), want);
  if (n == 0) return Moved::ended;
  if (n < 0) return errno == EAGAIN || errno == EINTR ? Moved::none_yet : Moved::ended;
  left_ -= static_cast<std::uint64_t>(n);
  stream.pending.assign(buffer_->data(), static_cast<std::size_t>(n));
  (void)flush(stream);
  return Moved::some;
}

void OutputRelay::cut() {
  if (truncated_) return;
  truncated_ = true;
  jail::log().info("the tool's output reached the cap; its stdout and stderr are closed");
  for (auto& stream : streams_) stream.source.reset();
}

pollfd OutputRelay::poll_entry(int stream_index) const {
  const Stream& stream = streams_[static_cast<std::size_t>(stream_index)];
  if (stream.sink_full) return {stream.sink.fd(), POLLOUT, 0};
  if (!stream.source.valid()) return {-1, 0, 0};
  return {stream.source.get(), POLLIN, 0};
}

void OutputRelay::on_readable(int stream_index) {
  Stream& stream = streams_[static_cast<std::size_t>(stream_index)];
  stream.sink_full = false;
  if (!stream.pending.empty()) {
    (void)flush(stream);
    return;
  }
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

void OutputRelay::drain(int stop, std::optional<Clock::time_point> until) {
  for (auto& stream : streams_) {
    while (!stream.pending.empty() || (stream.source.valid() && left_ > 0)) {
      const Moved moved = move_chunk(stream);
      if (moved == Moved::ended) break;
      if (moved == Moved::some) continue;
      // Every writer of the tool's pipe is gone with the jail, so a read that would wait means
      // there is nothing more; only the caller's side can still be full.
      if (!stream.sink_full) break;
      if (!stream.sink.wait_for_room(stop, until)) {
        jail::log().warn("the caller did not read the tool's last output in time; dropped");
        stream.pending.clear();
        break;
      }
    }
    if (stream.source.valid() && left_ == 0 && has_pending(stream.source.get())) cut();
  }
}

}  // namespace jail
