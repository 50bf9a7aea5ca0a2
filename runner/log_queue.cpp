#include "log_queue.hpp"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace jail::runner {

LogQueue::LogQueue(int fd, bool owned) : fd_(fd), owned_(owned), owner_(::getpid()) {
  writer_ = std::thread([this] { write_loop(); });
}

LogQueue::~LogQueue() {
  close(kPatience);
}

void LogQueue::push(std::string line) {
  {
    std::lock_guard lock(mutex_);
    if (closing_ || queued_bytes_ + line.size() > kQueuedBytes) {
      ++dropped_;
      return;
    }
    queued_bytes_ += line.size();
    lines_.push_back(std::move(line));
  }
  wake_.notify_one();
}

void LogQueue::flush() {
  std::unique_lock lock(mutex_);
  if (stalled_ || closing_) return;
  if (!written_.wait_for(lock, kFlushWait, [this] { return lines_.empty() && !writing_; })) {
    stalled_ = true;
  }
}

std::uint64_t LogQueue::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

void LogQueue::close(std::chrono::milliseconds patience) {
  // A forked child that exits through exit() has the queue but not its writer thread.
  if (::getpid() != owner_) return;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    closing_ = true;
    patience_ = patience;
  }
  wake_.notify_one();
  writer_.join();
  if (owned_) ::close(fd_);
}

void LogQueue::write_loop() {
  // Every signal blocked: a signal sent to jail must reach the thread that waits for it (the
  // supervisor's signalfd forwards SIGTERM to the tool), never this one, where its default
  // action would end jail. A reader that went away is then EPIPE here, not a SIGPIPE.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  for (;;) {
    std::string text;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return closing_ || !lines_.empty(); });
      // Said where the lines went missing, before the next that comes through.
      if (dropped_ > dropped_told_) {
        text = "jail: " + std::to_string(dropped_ - dropped_told_) +
               " messages dropped: the reader of jail's log was not reading\n";
        dropped_told_ = dropped_;
      }
      if (!lines_.empty()) {
        queued_bytes_ -= lines_.front().size();
        text += std::move(lines_.front());
        lines_.pop_front();
      } else if (closing_ && text.empty()) {
        return;
      }
      writing_ = true;
    }
    const bool wrote = write_out(text);
    {
      std::lock_guard lock(mutex_);
      writing_ = false;
      if (lines_.empty()) stalled_ = false;
    }
    written_.notify_all();
    if (!wrote) return;
  }
}

bool LogQueue::write_out(const std::string& text) {
  std::size_t done = 0;
  auto last_progress = std::chrono::steady_clock::now();
  while (done < text.size()) {
    // Poll first, then at most PIPE_BUF bytes: on a pipe, a write that size never blocks once
    // poll says there is room, so a reader that stops reading cannot hold this thread.
    pollfd entry{fd_, POLLOUT, 0};
    const int ready = ::poll(&entry, 1, 100);
    if (ready < 0 && errno != EINTR) return false;
    if (ready > 0) {
      if ((entry.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) return false;
      const std::size_t piece = std::min<std::size_t>(PIPE_BUF, text.size() - done);
      const ssize_t wrote = ::write(fd_, text.data() + done, piece);
      if (wrote > 0) {
        done += static_cast<std::size_t>(wrote);
        last_progress = std::chrono::steady_clock::now();
        continue;
      }
      if (wrote < 0 && errno != EINTR && errno != EAGAIN) return false;
    }
    std::lock_guard lock(mutex_);
    if (closing_ && std::chrono::steady_clock::now() - last_progress >= patience_) return false;
  }
  return true;
}

}  // namespace jail::runner
