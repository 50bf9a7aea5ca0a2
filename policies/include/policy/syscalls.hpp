// x86_64 syscall names and numbers (libseccomp's table plus the calls newer than it).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jail::policy {

[[nodiscard]] std::optional<int> syscall_number(std::string_view name);
// The name, or "syscall_<nr>" when no table knows it.
[[nodiscard]] std::string syscall_name(int nr);
[[nodiscard]] const std::vector<std::string>& all_syscall_names();
// Whether libseccomp knows `name` on any architecture (socketcall is i386's, arm_fadvise64_64
// arm's): a name it knows nowhere is a typo, or newer than this jail.
[[nodiscard]] bool known_on_some_architecture(std::string_view name);

// True when the kernel reads argument `arg` of `nr` as a 32-bit int, so only its low half
// can be compared (ioctl's request, socket's domain, …).
[[nodiscard]] bool is_32bit_argument(int nr, int arg);

}  // namespace jail::policy
