// Child side, after clone: no allocation, no exceptions, no logging. See plan.hpp.
#include "child/identity.hpp"

#include <linux/securebits.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>

#include "child/fail.hpp"
#include "child/syscalls.hpp"

namespace jail::child {
namespace {

// NOROOT: uid 0 inside (--uid 0) gains nothing at execve. The locks stop the tool from undoing it.
constexpr unsigned long kSecurebits =
    SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
    SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;

bool identity_confirmed(const Plan& plan) {
  uid_t ruid, euid, suid;
  gid_t rgid, egid, sgid;
  if (::getresuid(&ruid, &euid, &suid) != 0 || ::getresgid(&rgid, &egid, &sgid) != 0) return false;
  if (ruid != plan.uid || euid != plan.uid || suid != plan.uid) return false;
  if (rgid != plan.gid || egid != plan.gid || sgid != plan.gid) return false;
  if (!sys::capabilities_empty()) return false;
  if (::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) return false;
  for (int cap = 0; cap <= plan.cap_last_cap; ++cap) {
    if (::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 0) return false;
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) != 0) return false;
  }
  return true;
}

}  // namespace

void take_tool_ids(const Plan& plan) {
  // A root caller's supplementary groups (gid 0 among them) must not reach a host path. A
  // non-root caller cannot drop them: the kernel requires setgroups "deny" for its gid map.
  if (plan.may_setgroups && sys::clear_groups() != 0) fail(plan, Step::setgroups, errno);
  if (sys::setresgid(plan.gid) != 0) fail(plan, Step::setgid, errno);
  if (sys::setresuid(plan.uid) != 0) fail(plan, Step::setuid, errno);
}

void drop_identity(const Plan& plan) {
  // Both need CAP_SETPCAP, so they come before the uid change takes the capabilities away.
  if (::prctl(PR_SET_SECUREBITS, kSecurebits, 0, 0, 0) != 0) fail(plan, Step::securebits, errno);
  for (int cap = 0; cap <= plan.cap_last_cap; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
      fail(plan, Step::drop_bounding_set, errno, cap);
  }
  take_tool_ids(plan);  // done already; again, so the drop stands on its own
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
    fail(plan, Step::drop_capabilities, errno);
  }
  if (sys::capset_empty() != 0) fail(plan, Step::drop_capabilities, errno);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail(plan, Step::no_new_privs, errno);
  if (!identity_confirmed(plan)) fail(plan, Step::verify_identity, EPERM);
}

void keep_caller_identity(const Plan& plan) {
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
    fail(plan, Step::drop_capabilities, errno);
  }
  if (sys::capset_empty() != 0) fail(plan, Step::drop_capabilities, errno);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail(plan, Step::no_new_privs, errno);
  // The bounding set stays (dropping it takes CAP_SETPCAP): with no_new_privs no execve can
  // raise a capability from it.
  uid_t ruid, euid, suid;
  gid_t rgid, egid, sgid;
  if (::getresuid(&ruid, &euid, &suid) != 0 || ::getresgid(&rgid, &egid, &sgid) != 0 ||
      ruid != plan.uid || euid != plan.uid || suid != plan.uid || rgid != plan.gid ||
      egid != plan.gid || sgid != plan.gid || !sys::capabilities_empty() ||
      ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
    fail(plan, Step::verify_identity, EPERM);
  }
}

}  // namespace jail::child
