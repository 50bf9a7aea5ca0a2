// Which argument a learned rule conditions on, per syscall: the one whose values say what the
// call does (an ioctl's request, a socket's domain), not a pointer or an fd that differs on every
// call. `jail policy learn` keeps the distinct values of that argument, up to a limit, and writes
// `allow NAME if argN in {…}`; the other syscalls get a plain `allow`.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace jail::policy {

// Distinct values kept per syscall. Past it the rule still allows only those kept, marked
// REVIEW: a tool that sprays values gets no unconditional allow for it.
inline constexpr std::size_t kKeptConditionValues = 256;

[[nodiscard]] std::optional<int> learned_condition_argument(std::string_view syscall);

}  // namespace jail::policy
