// The kernel itself and its namespaces: can jail give every tool its own user, pid, net, mount,
// ipc, uts and cgroup namespace here, as root and as an ordinary user?
#include <sched.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "doctor.hpp"

namespace jail::doctor {
namespace {

const std::vector<std::string> kUnshareSteps = {"setgroups", "setresgid", "setresuid", "unshare"};
constexpr int kUnshareStep = 4;  // the steps before it only drop to uid 65534

// jail's mounts use mount_setattr(AT_RECURSIVE), new in 5.12; everything else it needs is older.
constexpr int kMinMajor = 5;
constexpr int kMinMinor = 12;

struct NamespaceKind {
  const char* name;
  int flag;
};

constexpr NamespaceKind kNamespaces[] = {
    {"pid", CLONE_NEWPID}, {"net", CLONE_NEWNET}, {"mount", CLONE_NEWNS},
    {"ipc", CLONE_NEWIPC}, {"uts", CLONE_NEWUTS}, {"cgroup", CLONE_NEWCGROUP},
};

long landlock_abi_here() {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, 1 /* _VERSION */);
  return abi > 0 ? abi : 0;
}

bool caller_is_root() {
  return geteuid() == 0;
}

// Reads a sysctl holding one integer; absent files (a sysctl this kernel does not have) are null.
nlohmann::ordered_json read_sysctl_int(const std::string& path) {
  bool ok = false;
  std::string text = read_text_file(path, &ok);
  if (!ok) return nullptr;
  try {
    return std::stol(text);
  } catch (const std::exception&) {
    return nullptr;
  }
}

ProbeResult probe_namespace(int flags, bool as_nobody) {
  ProbeArgs args;
  args.unshare_flags = flags;
  args.as_nobody = as_nobody;
  return run_probe(probe_unshare, args);
}

// The unprivileged answer: yes, no, or unknown when the probe could not even become uid 65534
// (doctor running as root of a user namespace that does not map it, for instance).
enum class Answer { yes, no, unknown };

Answer unprivileged_answer(const ProbeResult& result) {
  if (result.succeeded()) return Answer::yes;
  if (result.ran && result.failure.step < kUnshareStep) return Answer::unknown;
  return Answer::no;
}

nlohmann::ordered_json to_json(Answer answer) {
  if (answer == Answer::unknown) return nullptr;
  return answer == Answer::yes;
}

}  // namespace

Check check_kernel() {
  Check check;
  check.name = "kernel";
  check.need = Need::optional;  // the feature probes below decide; the version only explains them
  utsname host{};
  uname(&host);
  int major = 0;
  int minor = 0;
  std::sscanf(host.release, "%d.%d", &major, &minor);
  check.facts["release"] = host.release;
  check.facts["machine"] = host.machine;
  check.finding = std::string("Linux ") + host.release + " on " + host.machine;
  const bool recent = major > kMinMajor || (major == kMinMajor && minor >= kMinMinor);
  check.status = recent ? Status::ok : Status::limited;
  check.meaning = recent
                      ? "new enough for everything jail uses (5.12+)"
                      : "older than 5.12: recursive read-only mounts (mount_setattr) are missing";
  return check;
}

Check check_user_namespaces() {
  Check check;
  check.name = "user_namespaces";
  const auto max = read_sysctl_int("/proc/sys/user/max_user_namespaces");
  check.facts["max_user_namespaces"] = max;
  // Distribution knobs that veto unprivileged user namespaces on some hosts; null when absent.
  check.facts["unprivileged_userns_clone"] =
      read_sysctl_int("/proc/sys/kernel/unprivileged_userns_clone");
  check.facts["apparmor_restrict_unprivileged_userns"] =
      read_sysctl_int("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");

  const bool root = caller_is_root();
  const ProbeResult as_caller = probe_namespace(CLONE_NEWUSER, false);
  // A non-root caller's own answer is the unprivileged answer; root learns it from uid 65534.
  const ProbeResult as_nobody = root ? probe_namespace(CLONE_NEWUSER, true) : as_caller;
  const Answer unprivileged = unprivileged_answer(as_nobody);
  const std::string caller_error =
      as_caller.succeeded() ? "" : describe_failure(as_caller, kUnshareSteps);
  const std::string nobody_error =
      as_nobody.succeeded() ? "" : describe_failure(as_nobody, kUnshareSteps);
  check.facts["caller_uid"] = geteuid();
  check.facts["available"] = as_caller.succeeded();
  check.facts["caller"] = as_caller.succeeded();
  check.facts["caller_error"] = caller_error;
  check.facts["unprivileged"] = to_json(unprivileged);
  check.facts["unprivileged_error"] = nobody_error;

  std::string finding = "max " + (max.is_null() ? std::string("unknown") : max.dump());
  finding += std::string("; as ") + (root ? "root" : "uid " + std::to_string(geteuid())) + ": " +
             (as_caller.succeeded() ? "yes" : caller_error);
  if (root) {
    finding += "; as uid 65534: " + (unprivileged == Answer::yes       ? std::string("yes")
                                     : unprivileged == Answer::unknown ? "unknown, " + nobody_error
                                                                       : nobody_error);
  }
  check.finding = finding;

  // Where a non-root caller cannot make one, jail runs its tools in the Landlock mode instead.
  const bool landlock = landlock_abi_here() > 0;
  check.facts["isolation"] = as_caller.succeeded() ? "namespaces"
                             : !root && landlock   ? "landlock"
                                                   : "none";
  if (!as_caller.succeeded() && !root && landlock) {
    check.status = Status::limited;
    check.meaning =
        "tools run in the Landlock mode here (--isolation auto picks it): no namespaces, the "
        "host's files confined by Landlock, the same seccomp policy; docs/landlock.md says "
        "what it cannot keep. Raise user.max_user_namespaces or lift the restriction for the "
        "full jail";
  } else if (!as_caller.succeeded()) {
    check.status = Status::missing;
    check.meaning =
        root ? "jail cannot create the user namespace every tool runs in; it cannot run here "
               "(raise user.max_user_namespaces or lift the distribution's restriction)"
             : "jail cannot create a user namespace here, and the kernel has no Landlock for "
               "the mode without one: it cannot run here (raise user.max_user_namespaces or "
               "lift the distribution's restriction)";
  } else if (unprivileged == Answer::no) {
    check.status = Status::limited;
    check.meaning = landlock ? "root callers get full isolation; non-root callers get the "
                               "Landlock mode (docs/landlock.md)"
                             : "root callers get full isolation; non-root callers cannot run "
                               "jail here";
  } else {
    check.status = Status::ok;
    check.meaning = !root ? "tools run as the caller mapped to itself in their own user namespace"
                    : unprivileged == Answer::yes
                        ? "tools run as an unprivileged uid in their own user namespace; non-root "
                          "callers can use jail too"
                        : "tools run as an unprivileged uid in their own user namespace";
  }
  return check;
}

Check check_namespaces() {
  Check check;
  check.name = "namespaces";
  const bool root = caller_is_root();
  std::vector<std::string> missing;
  std::vector<std::string> missing_unprivileged;
  std::vector<std::string> errors;  // one per missing kind, to say it once when they agree
  for (const NamespaceKind& kind : kNamespaces) {
    // Inside a new user namespace, as jail creates them (one clone3 with every flag).
    const ProbeResult as_caller = probe_namespace(CLONE_NEWUSER | kind.flag, false);
    const ProbeResult as_nobody =
        root ? probe_namespace(CLONE_NEWUSER | kind.flag, true) : as_caller;
    const Answer unprivileged = unprivileged_answer(as_nobody);
    nlohmann::ordered_json fact;
    fact["caller"] = as_caller.succeeded();
    fact["unprivileged"] = to_json(unprivileged);
    if (!as_caller.succeeded()) {
      fact["error"] = describe_failure(as_caller, kUnshareSteps);
      missing.push_back(kind.name);
      errors.push_back(fact["error"].get<std::string>());
    }
    if (unprivileged == Answer::no) missing_unprivileged.push_back(kind.name);
    check.facts[kind.name] = fact;
  }
  if (missing.empty()) {
    check.finding = "pid net mount ipc uts cgroup: each can be created in a new user namespace";
    if (root && !missing_unprivileged.empty()) {
      check.finding += "; not as uid 65534: " + join(missing_unprivileged, " ");
    }
  } else if (std::all_of(errors.begin(), errors.end(),
                         [&](const std::string& error) { return error == errors.front(); })) {
    check.finding = "cannot create " + join(missing, " ") + ": " + errors.front();
  } else {
    std::vector<std::string> details;
    for (size_t i = 0; i < missing.size(); ++i) details.push_back(missing[i] + ": " + errors[i]);
    check.finding = "cannot create " + join(details, "; ");
  }
  if (!missing.empty()) {
    check.status = Status::missing;
    check.meaning = "jail needs every one of them; it cannot run with full isolation here";
  } else if (!missing_unprivileged.empty()) {
    check.status = Status::limited;
    check.meaning = "full isolation for root callers; non-root callers cannot run jail here";
  } else {
    check.status = Status::ok;
    check.meaning = "every jailed tool gets all seven namespaces";
  }
  return check;
}

}  // namespace jail::doctor
