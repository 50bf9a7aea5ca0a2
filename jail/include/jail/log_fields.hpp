// The structured fields of the message libjail is logging on this thread, for a sink that writes
// them as data (jail's `--log-format json` does): a denial's syscall, arguments, pid, rule,
// action and count. Read inside a sink's log call; null for messages that carry none.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace jail {

struct LogFields {
  std::string_view event;  // "denied", "allowed_and_logged"
  std::string_view syscall;
  const std::array<std::uint64_t, 6>* args = nullptr;  // null: not known (a repeat count)
  int pid = 0;                                         // 0: not known
  std::string_view rule;                               // "default.policy:11"; empty: none
  std::string_view action;                             // "errno EPERM", "kill"
  std::uint64_t count = 1;                             // how many calls the message stands for
};

[[nodiscard]] const LogFields* current_log_fields();

}  // namespace jail
