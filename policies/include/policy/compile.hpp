// The compiler: Policy IR → a classic BPF program for seccomp(SECCOMP_SET_MODE_FILTER).
#pragma once

#include <linux/filter.h>

#include <stdexcept>
#include <vector>

#include "policy/policy.hpp"

namespace jail::policy {

enum class Routing {
  direct,  // the filter returns ERRNO|n, KILL_PROCESS, LOG, TRAP itself
  notify,  // every non-allow outcome becomes USER_NOTIF; the supervisor calls evaluate()
};

struct Program {
  std::vector<sock_filter> instructions;
  Routing routing = Routing::direct;
  // For loaders that want the kernel's struct; valid while `instructions` is unchanged.
  [[nodiscard]] sock_fprog fprog() {
    return sock_fprog{static_cast<unsigned short>(instructions.size()), instructions.data()};
  }
};

// Thrown when a policy cannot be compiled faithfully (the reason is the message).
class CompileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[nodiscard]] Program compile(const Policy& policy, Routing routing);

// One instruction a line, with labels and what each load and constant means.
[[nodiscard]] std::string disassemble(const Program& program);

}  // namespace jail::policy
