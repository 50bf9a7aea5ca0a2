#include "seccomp/lookup_policy.hpp"

#include <fcntl.h>

#include <optional>
#include <utility>
#include <vector>

#include "seccomp/lookup_calls.hpp"
#include "seccomp/reroute.hpp"

namespace jail {
namespace {

// When a lookup call is left to the kernel even though the trace is on.
std::optional<policy::Condition> kernel_only(const LookupCall& call, std::uint64_t start_envp) {
  if (call.number == SYS_execve)
    return arg_compare(2, ~std::uint64_t{0}, policy::CmpOp::eq, start_envp);
  std::vector<policy::Condition> on_the_fd;
  if (call.empty_path_flags_arg >= 0) {
    on_the_fd.push_back(
        arg_compare(call.empty_path_flags_arg, AT_EMPTY_PATH, policy::CmpOp::ne, 0));
  }
  if (call.null_path_is_fd) {
    on_the_fd.push_back(arg_compare(call.path_arg, ~std::uint64_t{0}, policy::CmpOp::eq, 0));
  }
  if (on_the_fd.empty()) return std::nullopt;
  if (on_the_fd.size() == 1) return on_the_fd.front();
  policy::Condition either;
  either.kind = policy::Condition::Kind::any_of;
  either.operands = std::move(on_the_fd);
  return either;
}

}  // namespace

policy::Policy with_lookups_traced(const policy::Policy& policy, std::uint64_t start_envp) {
  std::vector<int> numbers;
  for (const LookupCall& call : kLookupCalls) numbers.push_back(call.number);
  return reroute_allowed(
      policy, numbers, [&](std::vector<policy::Rule>& rules, const policy::Rule& allowed) {
        if (const auto exempt = kernel_only(*find_lookup_call(allowed.syscall), start_envp)) {
          policy::Rule in_kernel = allowed;
          in_kernel.condition = both(allowed.condition, *exempt);
          rules.push_back(in_kernel);
        }
        rules.push_back(to_supervisor(allowed));
      });
}

}  // namespace jail
