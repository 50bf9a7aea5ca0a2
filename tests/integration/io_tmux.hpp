// A private tmux server for the terminal tests: a real terminal (tmux's pane) in which jail runs
// as a person would run it, typed at with send-keys and read with capture-pane.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jail_test::io {

// Whether tmux can be run; the message to fail with when it cannot.
[[nodiscard]] std::optional<std::string> tmux_missing();

// One tmux server on a socket of its own (`tmux -L <unique>`), with one session of one pane.
// The destructor kills that server, and with it whatever still runs in the pane.
class Tmux {
 public:
  // Starts `command` (run by /bin/sh) in a detached session of `width` x `height`.
  Tmux(const std::string& command, int width, int height);
  ~Tmux();
  Tmux(const Tmux&) = delete;
  Tmux& operator=(const Tmux&) = delete;

  // The pane's text, wrapped lines joined, history included.
  [[nodiscard]] std::string screen() const;
  // Waits until the pane shows `needle`; false on the deadline (`timeout`, scaled by
  // ../support/time_scale.hpp). `last`: the last screen seen.
  [[nodiscard]] bool wait_for(std::string_view needle, std::chrono::milliseconds timeout,
                              std::string* last = nullptr) const;
  // Types `text` literally.
  void type(const std::string& text) const;
  // Presses keys by tmux's names: "Enter", "C-c", "C-d".
  void press(const std::string& key) const;
  void resize(int width, int height) const;
  // "WxH" of the pane as tmux sees it.
  [[nodiscard]] std::string pane_size() const;

 private:
  // Runs tmux with `args` on this server; its stdout.
  std::string tmux(const std::vector<std::string>& args) const;

  std::string socket_;
  std::string socket_path_;
  bool started_ = false;
};

}  // namespace jail_test::io
