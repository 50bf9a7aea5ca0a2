// Parent side: the jail's policy as an OCI linux.seccomp object, for runtimes that load it
// themselves (runsc --oci-seccomp, runc, crun).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "policy/policy.hpp"

namespace jail {

struct OciSeccomp {
  nlohmann::json profile;                        // null for "none"
  std::shared_ptr<const policy::Policy> policy;  // what it was made from: names the denials
};

// Who reads the profile. A bundle for any runtime is written as libseccomp reads a profile
// (runc, crun, and runsc too); jail's own runsc runs get runsc's ordered form, a fraction of
// the size, which every runsc process parses again at each start (policy/oci.hpp).
enum class OciReader : std::uint8_t { any_runtime, runsc };

// Throws jail::Error when the policy cannot be expressed in OCI faithfully: a runtime never gets
// a policy that decides differently from the native one — but for the errno codes runsc cannot
// return (see export_runsc_seccomp), which stay refused with EPERM.
[[nodiscard]] OciSeccomp oci_seccomp_for(const std::string& policy_name, OciReader reader);

// Throws jail::Error (step "policy") for a policy gVisor cannot hold a tool to: one that lets
// ptrace run (see policy::ptrace_can_run). Every policy that runsc applies — as a profile or
// through jail's loader — is checked.
void refuse_if_gvisor_cannot_hold(const policy::Policy& policy, const std::string& policy_name);

// The same, of a policy already loaded (named `policy_name` in messages).
[[nodiscard]] nlohmann::json oci_profile_of(const policy::Policy& policy,
                                            const std::string& policy_name, OciReader reader);

}  // namespace jail
