// Parent side: the jail's policy as an OCI linux.seccomp object, for runtimes that load it
// themselves (runsc --oci-seccomp, runc, crun).
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "policy/policy.hpp"

namespace jail {

struct OciSeccomp {
  nlohmann::json profile;                        // null for "none"
  std::shared_ptr<const policy::Policy> policy;  // what it was made from: names the denials
};

// Throws jail::Error when the policy cannot be expressed in OCI faithfully: a runtime never gets
// a policy that decides differently from the native one.
[[nodiscard]] OciSeccomp oci_seccomp_for(const std::string& policy_name);

}  // namespace jail
