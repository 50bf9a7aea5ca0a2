// How a value of an argument that matters is written in a policy: by the name a reader knows
// (TCGETS, AF_UNIX, F_SETLK, CLONE_VM | CLONE_THREAD | SIGCHLD), never as the number, wherever
// the language has a name for it. `jail policy learn` writes its conditions with it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jail::policy {

// `value` of argument `arg` of `syscall`, as policy text that reads back as the same value:
// a name, names joined by " | " (flags), or a hex number where no name covers it.
[[nodiscard]] std::string value_text(std::string_view syscall, int arg, std::uint64_t value);

}  // namespace jail::policy
