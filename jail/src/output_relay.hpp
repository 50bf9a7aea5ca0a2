// Parent side: the tool's stdout and stderr, relayed to the caller's and cut at a byte cap.
// A flood (`yes`) costs one fixed buffer per stream, never more: the data moves with splice where
// the destination allows it, else through that buffer. Past the cap the pipes are closed, so the
// tool gets EPIPE/SIGPIPE instead of filling memory or disk; so does a tool whose reader went
// away. Writes to the caller never block
// (caller_sink.hpp): a caller that stops reading holds up the tool, not the supervisor.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <poll.h>

#include "caller_sink.hpp"
#include "unique_fd.hpp"

namespace jail {

class OutputRelay {
 public:
  using Clock = std::chrono::steady_clock;

  // `stderr_source` is empty when the tool's stderr shares stdout's pipe (the caller's `2>&1`).
  OutputRelay(UniqueFd stdout_source, UniqueFd stderr_source, int stdout_sink, int stderr_sink,
              std::uint64_t cap);

  // What to poll for `stream`: its pipe for input, or — while the caller is not reading — the
  // caller's side for room, so a stalled reader costs no CPU. fd -1 once closed.
  [[nodiscard]] pollfd poll_entry(int stream) const;
  // Moves what is there now from `stream` (0 stdout, 1 stderr).
  void on_readable(int stream);
  // After the jail ended: whatever is still in the pipes, up to the cap, waiting for the caller
  // to make room as a writer of a pipe would — until `stop` (an eventfd) is signalled or `until`
  // has passed; what is left then is dropped.
  void drain(int stop, std::optional<Clock::time_point> until);
  [[nodiscard]] bool truncated() const { return truncated_; }

 private:
  struct Stream {
    UniqueFd source;
    CallerSink sink;
    bool splice = true;  // until the sink turns out not to support it
    bool sink_full = false;
    std::string pending;  // read from the tool, not yet taken by the caller
  };
  enum class Moved { some, none_yet, ended };
  // Moves at most one chunk (never past the cap).
  Moved move_chunk(Stream& stream);
  Moved flush(Stream& stream);
  // The caller's reader went away (EPIPE), or its side failed: the tool's pipe is closed too, so
  // that the tool learns it as it would writing there itself (EPIPE, SIGPIPE), instead of running
  // on with its output dropped. Not a cut: no limit was reached.
  void sink_gone(Stream& stream);
  void cut();

  std::array<Stream, 2> streams_;
  std::uint64_t left_;
  bool truncated_ = false;
  std::unique_ptr<std::array<char, 64 * 1024>> buffer_;
};

}  // namespace jail
