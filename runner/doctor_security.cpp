// Kernel security features jail layers on top of namespaces: seccomp (with user notification, so
// the supervisor sees every denial) and Landlock.
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "doctor.hpp"

namespace jail::doctor {
namespace {

const std::vector<std::string> kListenerSteps = {"prctl(PR_SET_NO_NEW_PRIVS)",
                                                 "seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER)"};

// 0 when this process may take another's descriptors, as jail's supervisor does to make the
// tool's connects (and, below Landlock ABI 6, to check a pidfd signal); the errno otherwise.
int descriptors_untakeable() {
  const int self = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
  if (self < 0) return errno;
  const int copy = static_cast<int>(syscall(SYS_pidfd_getfd, self, self, 0));
  const int error = copy < 0 ? errno : 0;
  if (copy >= 0) close(copy);
  close(self);
  return error;
}

struct Action {
  const char* name;  // as in /proc/sys/kernel/seccomp/actions_avail
  unsigned value;
};

// user_notif: every denial reaches the supervisor; kill_process: violations end the whole tool
// (never kill_thread, which leaves the rest running); log: audit-mode policies.
constexpr Action kNeededActions[] = {
    {"user_notif", SECCOMP_RET_USER_NOTIF},
    {"kill_process", SECCOMP_RET_KILL_PROCESS},
    {"log", SECCOMP_RET_LOG},
};

// Asking the kernel directly is harmless: SECCOMP_GET_ACTION_AVAIL installs nothing.
bool action_available(unsigned action) {
  return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

}  // namespace

Check check_seccomp() {
  Check check;
  check.name = "seccomp";
  errno = 0;
  const int mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
  const bool compiled_in = !(mode < 0 && errno == EINVAL);
  check.facts["mode"] = mode;
  check.facts["mode_name"] = mode == 0 ? "disabled" : mode == 2 ? "filter" : "unknown";
  bool listed_ok = false;
  const std::vector<std::string> listed =
      split_words(read_text_file("/proc/sys/kernel/seccomp/actions_avail", &listed_ok));
  check.facts["actions_avail"] = listed;

  std::vector<std::string> missing_actions;
  nlohmann::ordered_json actions;
  for (const Action& action : kNeededActions) {
    const bool listed_here = std::find(listed.begin(), listed.end(), action.name) != listed.end();
    // Both must agree: the file is what the kernel advertises, the syscall what it accepts.
    const bool available = listed_here && action_available(action.value);
    actions[action.name] = available;
    if (!available) missing_actions.emplace_back(action.name);
  }
  check.facts["actions"] = actions;

  const ProbeResult listener = run_probe(probe_seccomp_listener, ProbeArgs{});
  check.facts["new_listener"] = listener.succeeded();
  if (!listener.succeeded())
    check.facts["new_listener_error"] = describe_failure(listener, kListenerSteps);
  const bool user_notification = listener.succeeded() && actions["user_notif"].get<bool>();
  check.facts["user_notification"] = user_notification;

  seccomp_notif_sizes sizes{};
  if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0) {
    check.facts["notif_sizes"] = {{"notif", sizes.seccomp_notif},
                                  {"resp", sizes.seccomp_notif_resp},
                                  {"data", sizes.seccomp_data}};
  }

  if (!compiled_in) {
    check.status = Status::missing;
    check.finding = "this kernel has no seccomp";
    check.meaning = "jail cannot filter syscalls; it cannot run here";
    return check;
  }
  std::string finding = "filter mode works; actions " + (listed_ok ? join(listed, " ") : "unknown");
  finding += "; NEW_LISTENER probe: " + (listener.succeeded()
                                             ? std::string("got a notification fd")
                                             : describe_failure(listener, kListenerSteps));
  if (mode == 2) finding += "; doctor itself already runs under a seccomp filter";
  const int untakeable = descriptors_untakeable();
  check.facts["pidfd_getfd"] = untakeable == 0;
  if (untakeable != 0) finding += "; pidfd_getfd: " + errno_name(untakeable);
  check.finding = finding;

  if (!missing_actions.empty() || !listener.succeeded()) {
    check.status = Status::missing;
    check.meaning = "jail needs user notification and kill_process/log actions" +
                    (missing_actions.empty() ? std::string()
                                             : " (missing: " + join(missing_actions, " ") + ")") +
                    ": without them denials cannot be reported; jail cannot run here";
  } else if (mode == 2) {
    check.status = Status::limited;
    check.meaning =
        "jail's filter stacks under the one doctor inherited (a container's?): that outer filter "
        "may deny syscalls jail never reports";
    if (untakeable != 0) {
      check.meaning +=
          "; it refuses pidfd_getfd, so jail cannot make the tool's connects: --net host, "
          "--allow-socket and --allow-abstract are refused (Docker's profile refuses it to a "
          "container without CAP_SYS_PTRACE: docker run --cap-add SYS_PTRACE)";
    }
  } else {
    check.status = Status::ok;
    check.meaning =
        "jail filters syscalls and its supervisor sees every denial (user notification)";
  }
  return check;
}

Check check_landlock() {
  Check check;
  check.name = "landlock";
  // jail scopes the tool's abstract Unix sockets with Landlock (ABI 6+); without it a run goes
  // on, and only --net host loses that scope (the jail's own network namespace has none of the
  // host's abstract sockets).
  check.need = Need::optional;
  const long abi =
      syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  const int error = abi < 0 ? errno : 0;
  bool lsm_ok = false;
  const std::string lsm = read_text_file("/sys/kernel/security/lsm", &lsm_ok);
  check.facts["abi"] = abi > 0 ? nlohmann::ordered_json(abi) : nlohmann::ordered_json(nullptr);
  check.facts["lsm"] = lsm_ok ? nlohmann::ordered_json(lsm) : nlohmann::ordered_json(nullptr);
  if (abi > 0) {
    check.status = Status::ok;
    check.finding = "ABI version " + std::to_string(abi);
    check.meaning =
        abi >= 6 ? "abstract Unix sockets are scoped to the jail (with --net host the host's are "
                   "unreachable)"
                 : "too old to scope abstract Unix sockets (ABI 6): with --net host the tool "
                   "reaches the host's (X11, daemons' control sockets); the status JSON says "
                   "abstract_sockets_scoped: false";
    return check;
  }
  check.facts["error"] = errno_name(error);
  check.status = Status::missing;
  check.finding = error == EOPNOTSUPP ? "built in but not enabled (add landlock to lsm= at boot)"
                  : error == ENOSYS   ? "not built into this kernel"
                                      : "unavailable: " + errno_name(error);
  check.meaning =
      "abstract Unix sockets are not scoped: with --net host the tool reaches the host's (X11, "
      "daemons' control sockets); the status JSON says abstract_sockets_scoped: false";
  return check;
}

}  // namespace jail::doctor
