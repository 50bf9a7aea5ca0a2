// Parent side: relays the jail's pty to the caller. The caller's terminal is put in raw mode
// (the pty inside does the line editing and turns ^C into SIGINT for the tool) and restored on
// every way out of the supervisor, including exceptions.
#pragma once

#include <termios.h>

#include <cstdint>
#include <optional>

#include "unique_fd.hpp"

namespace jail {

class TerminalRelay {
 public:
  // input: the caller's fd whose bytes go to the tool (-1: none); output: where the tool's
  // terminal output goes; cap: --max-output, the bytes relayed before the terminal is hung up
  // (the tool gets SIGHUP and EIO, as from a terminal that went away).
  TerminalRelay(UniqueFd master, int input, int output, std::optional<std::uint64_t> cap);
  TerminalRelay(const TerminalRelay&) = delete;
  TerminalRelay& operator=(const TerminalRelay&) = delete;
  ~TerminalRelay();

  [[nodiscard]] int master() const { return master_open_ ? master_.get() : -1; }
  [[nodiscard]] int input() const { return input_; }
  [[nodiscard]] bool truncated() const { return truncated_; }

  void on_master_readable();
  void on_input_readable();
  // SIGWINCH: the caller's window size becomes the pty's, which signals the tool's foreground.
  void copy_window_size();
  // After the jail has ended: what the tool wrote last is still in the pty.
  void drain();

 private:
  UniqueFd master_;
  bool master_open_ = true;
  int input_;
  int output_;
  int terminal_;  // the caller's terminal (raw mode, window size), or -1
  bool restore_ = false;
  termios saved_{};
  std::optional<std::uint64_t> left_;  // of the cap
  bool truncated_ = false;

  // Relays n bytes of the tool's output within the cap; past it, hangs the terminal up.
  void relay(const char* data, std::size_t n);
};

}  // namespace jail
