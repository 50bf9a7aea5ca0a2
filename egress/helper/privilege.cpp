// Host side: dropping to the helper's own identity, and proving that nothing is left.
#include "privilege.hpp"

#include <grp.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "setup_error.hpp"

namespace jail::egress {

namespace {

using CapabilitySets = __user_cap_data_struct[_LINUX_CAPABILITY_U32S_3];

// While still root (CAP_SETPCAP): nothing this process runs could ever gain a capability back,
// even if a later step went wrong. An unprivileged caller's helper has none to gain.
void empty_bounding_set() {
  for (int capability = 0; capability < 64; ++capability) {
    if (prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0) {
      if (errno == EINVAL) break;  // past the kernel's last capability
      throw system_error("dropping capability " + std::to_string(capability) +
                         " from the bounding set");
    }
    if (prctl(PR_CAPBSET_READ, capability, 0, 0, 0) != 0) {
      throw SetupError("capability " + std::to_string(capability) + " is left in the bounding set");
    }
  }
}

void change_identity(uid_t uid, gid_t gid) {
  if (uid == 0 || gid == 0) throw SetupError("--uid and --gid must not be 0: never run as root");
  empty_bounding_set();
  if (setgroups(0, nullptr) != 0) throw system_error("setgroups(0)");
  if (setresgid(gid, gid, gid) != 0) throw system_error("setresgid(" + std::to_string(gid) + ")");
  if (setresuid(uid, uid, uid) != 0) throw system_error("setresuid(" + std::to_string(uid) + ")");
}

void clear_capabilities() {
  // Inheritable survives a uid change, and set-up may have left securebits that keep the rest.
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
    throw system_error("clearing the ambient capabilities");
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  CapabilitySets none{};
  if (syscall(SYS_capset, &header, none) != 0) throw system_error("clearing the capabilities");
}

void verify_identity(uid_t uid, gid_t gid) {
  uid_t real = 0, effective = 0, saved = 0;
  gid_t real_gid = 0, effective_gid = 0, saved_gid = 0;
  if (getresuid(&real, &effective, &saved) != 0 ||
      getresgid(&real_gid, &effective_gid, &saved_gid) != 0) {
    throw system_error("reading the identity back");
  }
  if (real != uid || effective != uid || saved != uid || real == 0) {
    throw SetupError("the uid is not " + std::to_string(uid) + " in all of real, effective, saved");
  }
  if (real_gid != gid || effective_gid != gid || saved_gid != gid || real_gid == 0) {
    throw SetupError("the gid is not " + std::to_string(gid) + " in all of real, effective, saved");
  }
}

void verify_no_capabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  CapabilitySets sets{};
  if (syscall(SYS_capget, &header, sets) != 0) throw system_error("reading the capabilities");
  for (const auto& set : sets) {
    if (set.effective != 0 || set.permitted != 0 || set.inheritable != 0) {
      throw SetupError("capabilities are left after dropping them all");
    }
  }
  for (int capability = 0; capability < 64; ++capability) {
    const int set = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, capability, 0, 0);
    if (set < 0 && errno == EINVAL) break;  // past the kernel's last capability
    if (set != 0) throw SetupError("ambient capability " + std::to_string(capability) + " is left");
  }
}

}  // namespace

void drop_privileges(const Options& options) {
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (geteuid() == 0) {
    if (!options.uid || !options.gid) {
      throw SetupError("started as root: --uid and --gid name the identity to run as");
    }
    uid = *options.uid;
    gid = *options.gid;
    change_identity(uid, gid);
  } else {
    if (options.uid && *options.uid != uid) {
      throw SetupError("--uid " + std::to_string(*options.uid) + " is not the caller's own uid " +
                       std::to_string(uid) + ", and only root can change it");
    }
    if (options.gid && *options.gid != gid) {
      throw SetupError("--gid " + std::to_string(*options.gid) + " is not the caller's own gid " +
                       std::to_string(gid) + ", and only root can change it");
    }
  }
  clear_capabilities();
  verify_identity(uid, gid);
  verify_no_capabilities();
}

void harden_process(pid_t parent) {
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) throw system_error("PR_SET_DUMPABLE");
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) throw system_error("PR_SET_PDEATHSIG");
  // The parent may have died before the signal was armed: then nobody would ever kill us.
  if (getppid() != parent) throw SetupError("jail (the parent) is gone");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) throw system_error("PR_SET_NO_NEW_PRIVS");
}

}  // namespace jail::egress
