// Parent side: the tool's stdout and stderr, relayed to the caller's and cut at a byte cap.
// A flood (`yes`) costs one fixed buffer, never more: the data moves with splice where the
// destination allows it, else through that buffer. Past the cap the pipes are closed, so the
// tool gets EPIPE/SIGPIPE instead of filling memory or disk.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include <poll.h>

#include "unique_fd.hpp"

namespace jail {

class OutputRelay {
 public:
  OutputRelay(UniqueFd stdout_source, UniqueFd stderr_source, int stdout_sink, int stderr_sink,
              std::uint64_t cap);

  // What to poll for `stream`: its pipe for input, or — while the caller is not reading — the
  // caller's side for room, so a stalled reader costs no CPU. fd -1 once closed.
  [[nodiscard]] pollfd poll_entry(int stream) const;
  // Moves what is there now from `stream` (0 stdout, 1 stderr).
  void on_readable(int stream);
  // After the jail ended: whatever is still in the pipes, up to the cap.
  void drain();
  [[nodiscard]] bool truncated() const { return truncated_; }

 private:
  struct Stream {
    UniqueFd source;
    int sink;
    bool splice = true;  // until the sink turns out not to support it
    bool sink_full = false;
  };
  enum class Moved { some, none_yet, ended };
  // Moves at most one chunk (never past the cap).
  Moved move_chunk(Stream& stream);
  void cut();

  std::array<Stream, 2> streams_;
  std::uint64_t left_;
  bool truncated_ = false;
  std::unique_ptr<std::array<char, 64 * 1024>> buffer_;
};

}  // namespace jail
