#include "policy/learn_conditions.hpp"

#include <array>
#include <utility>

namespace jail::policy {
namespace {

constexpr std::array<std::pair<std::string_view, int>, 6> kConditionArgument = {{
    {"ioctl", 1},    // the request: TCGETS is a terminal query, TIOCSTI types into the terminal
    {"socket", 0},   // the domain: AF_UNIX stays on the machine, AF_INET/AF_PACKET do not
    {"clone", 0},    // the flags: threads and forks, or new namespaces
    {"prctl", 0},    // the option: PR_SET_NAME is harmless, PR_SET_SECCOMP is not
    {"fcntl", 1},    // the command: F_GETFL and F_SETFD, or F_SETOWN and leases
    {"madvise", 2},  // the advice: MADV_DONTNEED frees, MADV_HWPOISON injects memory errors
}};

}  // namespace

std::optional<int> learned_condition_argument(std::string_view syscall) {
  for (const auto& [name, argument] : kConditionArgument) {
    if (name == syscall) return argument;
  }
  return std::nullopt;
}

}  // namespace jail::policy
