// The records the child side sends to the parent over the report socket (a SOCK_SEQPACKET pair:
// each record is one message, never torn, and may carry a file descriptor). Fixed size, so
// neither side needs framing or allocation.
#pragma once

#include <cstdint>

namespace jail::child {

enum class ReportKind : std::int32_t {
  setup_failed = 1,      // step, err, detail = mount op index or -1
  exec_failed = 2,       // err
  tool_exited = 3,       // detail = wait status of the tool
  terminal = 4,          // carries the pty master the tool's terminal is relayed through
  seccomp_listener = 5,  // carries the tool's seccomp user-notification fd
  timing = 6,            // --trace-timing: step = the Phase, time_ns = when (CLOCK_MONOTONIC)
  running = 7,           // runsc's keeper started runsc (it exec'd or ended): jail's thread goes on
  tmpfs = 8,             // carries a writable tmpfs of the jail; detail = its mount op's index
  layer = 9,             // carries a dry run's overlay; detail = its mount op's index
  layer_store = 10,      // carries the tmpfs that holds a capped dry run's layers
  egress_listener = 11,  // carries the listener at kEgressProxyPort in the tool's network
};

struct Report {
  ReportKind kind;
  std::int32_t step;
  std::int32_t err;
  std::int32_t detail;
  std::int64_t time_ns = 0;
};

}  // namespace jail::child
