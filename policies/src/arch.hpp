// The architecture facts shared by the compiler and the evaluator, so both refuse the same
// foreign syscalls for the same reason.
#pragma once

#include <cstdint>

namespace jail::policy::detail {

// x32 syscalls run on the x86_64 audit arch with this bit set in the number; they reach
// different kernel entry points, so a filter written for x86_64 numbers must refuse them.
inline constexpr std::uint32_t kX32SyscallBit = 0x40000000U;

inline constexpr const char* kArchCheck = "<architecture check: only x86_64>";
inline constexpr const char* kX32Check = "<architecture check: x32 syscall>";

}  // namespace jail::policy::detail
