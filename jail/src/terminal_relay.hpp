// Parent side: relays the jail's pty to the caller. The caller's terminal is put in raw mode
// (the pty inside does the line editing and turns ^C into SIGINT for the tool) and restored on
// every way out of the supervisor, including exceptions. Nothing here waits: the pty master is
// non-blocking, the caller's side is written through a CallerSink, and each direction holds at
// most one chunk until the other side takes it.
#pragma once

#include <poll.h>
#include <termios.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "caller_sink.hpp"
#include "caller_source.hpp"
#include "unique_fd.hpp"

namespace jail {

class TerminalRelay {
 public:
  using Clock = std::chrono::steady_clock;

  // input: the caller's fd whose bytes go to the tool (-1: none); output: where the tool's
  // terminal output goes; cap: --max-output, the bytes relayed before the terminal is hung up
  // (the tool gets SIGHUP and EIO, as from a terminal that went away); tool_stdout_on_pty: the
  // tool's stdout is the pty, not a pipe or file of the caller's.
  TerminalRelay(UniqueFd master, int input, int output, std::optional<std::uint64_t> cap,
                bool tool_stdout_on_pty);
  TerminalRelay(const TerminalRelay&) = delete;
  TerminalRelay& operator=(const TerminalRelay&) = delete;
  ~TerminalRelay();

  // What to poll: the pty master, the caller's input, the caller's output (fd -1 where nothing
  // is waited for); events() takes the same three back with their revents.
  [[nodiscard]] std::array<pollfd, 3> poll_entries() const;
  void events(const std::array<pollfd, 3>& ready);
  [[nodiscard]] bool truncated() const { return truncated_; }

  // SIGWINCH: the caller's window size becomes the pty's, which signals the tool's foreground.
  void copy_window_size();
  // After the jail has ended: what the tool wrote last is still in the pty; it is relayed,
  // waiting for the caller to make room, until `stop` (an eventfd) or `until`.
  void drain(int stop, std::optional<Clock::time_point> until);

 private:
  void read_master();
  void read_input();
  void write_master();
  void write_output();
  // Takes n bytes of the tool's output within the cap; past it, hangs the terminal up.
  void take_output(const char* data, std::size_t n);

  UniqueFd master_;
  bool master_open_ = true;
  int input_;  // the caller's fd itself, -1 for none
  CallerSource input_reader_;
  CallerSink output_;
  int terminal_;  // the caller's terminal (raw mode, window size), or -1
  bool restore_ = false;
  termios saved_{};
  std::optional<std::uint64_t> left_;  // of the cap
  bool truncated_ = false;
  bool output_gone_ = false;  // the caller's reader went away: the tool's output is dropped
  bool input_ended_ = false;  // the caller's input ended; the end-of-file character waits
  std::string to_master_;     // the caller's input the pty has not taken yet
  std::string to_output_;     // the tool's output the caller has not taken yet
};

}  // namespace jail
