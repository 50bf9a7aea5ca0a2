// Child side, after clone: no allocation, no exceptions, no logging. See plan.hpp.
#include "child/keyring.hpp"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/keyctl.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "child/fail.hpp"

namespace jail::child {
namespace {

constexpr sock_filter statement(std::uint16_t code, std::uint32_t k) {
  return sock_filter{code, 0, 0, k};
}

constexpr sock_filter jump_if(std::uint32_t value, std::uint8_t taken, std::uint8_t not_taken) {
  return sock_filter{BPF_JMP | BPF_JEQ | BPF_K, taken, not_taken, value};
}

// int $0x80 reaches i386's numbers for the same calls from a 64-bit process, and x32's are
// x86_64's with this bit set: every way in is closed, whatever filter comes after.
constexpr std::uint32_t kI386AddKey = 286;
constexpr std::uint32_t kI386RequestKey = 287;
constexpr std::uint32_t kI386Keyctl = 288;
constexpr std::uint32_t kX32Bit = 0x40000000;

// EPERM for the three, as the filter that refused the join answers them; everything else goes
// on to the other filters. The jump offsets count from the next instruction.
sock_filter no_keys[] = {
    statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
    jump_if(AUDIT_ARCH_I386, 5, 0),  // to the i386 numbers
    statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
    statement(BPF_ALU | BPF_AND | BPF_K, ~kX32Bit),
    jump_if(SYS_add_key, 7, 0),
    jump_if(SYS_request_key, 6, 0),
    jump_if(SYS_keyctl, 5, 4),
    statement(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
    jump_if(kI386AddKey, 3, 0),
    jump_if(kI386RequestKey, 2, 0),
    jump_if(kI386Keyctl, 1, 0),
    statement(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    statement(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
};

}  // namespace

void leave_callers_keyring(const Plan& plan) {
  if (::syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, nullptr) >= 0 || errno == ENOSYS) return;
  if (errno != EPERM) fail(plan, Step::session_keyring, errno);
  // An unprivileged process loads a filter only with no_new_privs, which the tool gets anyway.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail(plan, Step::no_new_privs, errno);
  sock_fprog program{sizeof no_keys / sizeof no_keys[0], no_keys};
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0)
    fail(plan, Step::session_keyring, errno);
}

}  // namespace jail::child
