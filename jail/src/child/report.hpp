// The records the child side sends to the parent over the report pipe. Fixed size and smaller
// than PIPE_BUF, so each write is atomic and needs no framing or allocation.
#pragma once

#include <cstdint>

namespace jail::child {

enum class ReportKind : std::int32_t {
  setup_failed = 1,  // step, err, detail = mount op index or -1
  exec_failed = 2,   // err
  tool_exited = 3,   // detail = wait status of the tool
};

struct Report {
  ReportKind kind;
  std::int32_t step;
  std::int32_t err;
  std::int32_t detail;
};

}  // namespace jail::child
