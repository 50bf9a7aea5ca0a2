#include "seccomp/oci_export.hpp"

#include <cerrno>

#include <fmt/format.h>

#include "jail/error.hpp"
#include "jail/spec.hpp"
#include "log.hpp"
#include "policy/diagnostics.hpp"
#include "policy/oci.hpp"
#include "policy/policy.hpp"

namespace jail {

namespace {

// Debian's runsc refuses SCMP_ACT_KILL_PROCESS in an OCI profile; runc and crun accept it but
// also take SCMP_ACT_TRAP. TRAP keeps what matters — the call never runs and the uncaught SIGSYS
// ends the whole process — where SCMP_ACT_KILL would end only the calling thread. One profile
// then runs under all three.
nlohmann::json portable(nlohmann::json seccomp) {
  const auto fix = [](nlohmann::json& action) {
    if (action == "SCMP_ACT_KILL_PROCESS") action = "SCMP_ACT_TRAP";
  };
  fix(seccomp["defaultAction"]);
  for (auto& rule : seccomp["syscalls"]) fix(rule["action"]);
  return seccomp;
}

}  // namespace

void refuse_if_gvisor_cannot_hold(const policy::Policy& policy, const std::string& policy_name) {
  if (!policy::ptrace_can_run(policy)) return;
  throw Error("policy", ENOTSUP,
              fmt::format("policy {} lets ptrace run, which gVisor (runsc) cannot hold it to: {}; "
                          "put `kill ptrace` ahead of the rules that allow it, or use the "
                          "native runtime",
                          policy_name, policy::kGvisorTracerBypass));
}

nlohmann::json oci_profile_of(const policy::Policy& policy, const std::string& policy_name,
                              OciReader reader) {
  try {
    if (reader == OciReader::runsc) {
      refuse_if_gvisor_cannot_hold(policy, policy_name);
      return policy::export_runsc_seccomp(policy);
    }
    if (policy::ptrace_can_run(policy)) {
      // runc and crun hold it (Linux checks the filter again after a tracer's stop); a user
      // who takes the bundle to a gVisor RuntimeClass must know it does not hold there.
      jail::log().warn("policy {} lets ptrace run: under gVisor (runsc) {}", policy_name,
                       policy::kGvisorTracerBypass);
    }
    return portable(policy::export_oci_seccomp(policy));
  } catch (const policy::ExportError& error) {
    throw Error("policy", ENOTSUP,
                fmt::format("policy {} cannot be expressed as OCI seccomp faithfully: {}",
                            policy_name, error.what()));
  }
}

OciSeccomp oci_seccomp_for(const std::string& policy_name, OciReader reader) {
  if (policy_name == kNoPolicy) {
    jail::log().warn(
        "--policy none: the tool runs WITHOUT a seccomp filter; every syscall the "
        "runtime offers is open to it. Use this only to debug a policy.");
    return {};
  }
  std::shared_ptr<const policy::Policy> policy;
  try {
    policy = std::make_shared<const policy::Policy>(policy::load_policy(policy_name));
  } catch (const policy::PolicyError& error) {
    throw Error(
        "policy", EINVAL,
        fmt::format("cannot use policy {}:\n{}", policy_name, policy::format(error.diagnostics())));
  }
  return {oci_profile_of(*policy, policy_name, reader), policy};
}

}  // namespace jail
