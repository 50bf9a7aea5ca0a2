// The compiler: Policy IR → a classic BPF program for seccomp(SECCOMP_SET_MODE_FILTER).
#pragma once

#include <linux/filter.h>

#include <stdexcept>
#include <vector>

#include "policy/policy.hpp"

namespace jail::policy {

// Either way the prefix is the same: a foreign architecture (i386 `int $0x80`) or an x32
// syscall number returns KILL_PROCESS in the kernel, and allowed calls never leave it.
enum class Routing {
  // The filter returns ERRNO|n, KILL_PROCESS, LOG, TRAP itself.
  direct,
  // Every non-allow outcome becomes USER_NOTIF so the supervisor sees and reports it. It then
  // calls evaluate() on the notification's seccomp_data and answers: errno → resp.error =
  // -n; log → SECCOMP_USER_NOTIF_FLAG_CONTINUE; kill → kill the jailed process; trap → there
  // is no way to raise a synchronous SIGSYS from outside, so treat it as kill (or send
  // SIGSYS with tgkill and fail the call with ENOSYS).
  notify,
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
