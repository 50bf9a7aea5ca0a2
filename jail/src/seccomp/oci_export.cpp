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

nlohmann::json oci_profile_of(const policy::Policy& policy, const std::string& policy_name,
                              OciReader reader) {
  try {
    if (reader == OciReader::runsc) {
      if (policy::runsc_enosys_is_eperm(policy)) {
        jail::log().warn(
            "policy {} lets ptrace run, so under runsc its ENOSYS answers are EPERM (a tracer "
            "could let an SCMP_ACT_TRACE call through): clone3 then fails with EPERM and glibc "
            "starts no threads; refuse ptrace in the policy, or use the native runtime",
            policy_name);
      }
      return policy::export_runsc_seccomp(policy);
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
