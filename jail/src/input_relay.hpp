// Parent side: the caller's stdin relayed into the tool's, for a runsc run whose caller's stdin
// gVisor must not be handed (runsc chowns its stdio to nobody; see plumb_stdio). The relay reads
// only while the tool's pipe has room, so it reads ahead of the tool by at most the pipe's
// capacity, and it never reads a terminal from the background (which would stop jail with
// SIGTTIN where the tool, had it the terminal, would have waited its turn).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>

#include <poll.h>

#include "caller_source.hpp"
#include "unique_fd.hpp"

namespace jail {

class InputRelay {
 public:
  using Clock = std::chrono::steady_clock;

  // source: the caller's fd (not owned); sink: the write end of the tool's stdin pipe;
  // spare_reader: a second read end of it, kept for the relay's life (see keep_open_).
  InputRelay(int source, UniqueFd sink, UniqueFd spare_reader);

  // The caller's fd while there is room, the tool's pipe while a chunk waits for room, fd -1
  // once the caller's input ended (or while a background terminal is not read; see wake()).
  [[nodiscard]] pollfd poll_entry() const;
  void on_ready();
  // When to look again at a terminal jail is in the background of; none otherwise.
  [[nodiscard]] std::optional<Clock::time_point> wake() const { return parked_until_; }

 private:
  void read_chunk();
  void flush();
  void finish();

  int source_;  // the caller's fd itself, for the terminal checks
  CallerSource reader_;
  UniqueFd sink_;
  // A second reader keeps the pipe's read side open: a tool that exits or closes its stdin
  // makes writes wait for room instead of raising SIGPIPE in the caller's process.
  UniqueFd keep_open_;
  bool source_is_terminal_;
  std::optional<Clock::time_point> parked_until_;
  std::unique_ptr<std::array<char, 64 * 1024>> buffer_;
  std::size_t pending_begin_ = 0;
  std::size_t pending_end_ = 0;
};

}  // namespace jail
