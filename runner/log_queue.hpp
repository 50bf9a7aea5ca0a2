// jail's own messages on their way to stderr, --log-file or --log-fd, off the supervisor's path.
// A reader that does not read (a full stderr pipe) blocked every write, and with it the loop
// that enforces --timeout: a 2 s timeout lasted 25 s. Lines now go to a bounded queue written by
// a thread of its own; past the bound they are dropped and counted ("N messages dropped"),
// never waited for. Only human-readable lines go this way: the status JSON and the audit log
// are written whole, elsewhere.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace jail::runner {

class LogQueue {
 public:
  static constexpr std::size_t kQueuedBytes = 256 * 1024;

  // Writes to `fd`, which it closes at the end if `owned`.
  LogQueue(int fd, bool owned);
  LogQueue(const LogQueue&) = delete;
  LogQueue& operator=(const LogQueue&) = delete;
  // close(kPatience).
  ~LogQueue();

  static constexpr std::chrono::milliseconds kPatience{1000};

  // Never waits on the reader: a line that does not fit is dropped and counted.
  void push(std::string line);
  // Waits until what is queued is written, for kFlushWait at most; after a wait that ran out,
  // not at all until the queue has emptied again. So with a reader that reads, jail's lines come
  // out in order with what else jail writes to the same fd, and a stalled one costs one wait.
  void flush();
  static constexpr std::chrono::milliseconds kFlushWait{20};
  // Writes what is queued while the reader keeps taking it: gives up after `patience` without
  // progress. Then the writer stops; push() drops from then on.
  void close(std::chrono::milliseconds patience);

  [[nodiscard]] std::uint64_t dropped() const;

 private:
  void write_loop();
  // Writes `text` in pieces the fd takes without blocking; false once `stop_` has been asked
  // and no progress came within the patience.
  bool write_out(const std::string& text);

  int fd_;
  bool owned_;
  pid_t owner_;  // the process whose thread writes
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable written_;
  bool stalled_ = false;
  bool writing_ = false;  // the writer holds a line it has taken from the queue
  std::deque<std::string> lines_;
  std::size_t queued_bytes_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t dropped_told_ = 0;  // how many of them a "dropped" line has reported
  bool closing_ = false;
  bool closed_ = false;
  std::chrono::milliseconds patience_{0};
  std::thread writer_;
};

}  // namespace jail::runner
