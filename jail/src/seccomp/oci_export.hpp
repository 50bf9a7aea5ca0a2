// Parent side: the jail's policy as an OCI linux.seccomp object, for runtimes that load it
// themselves (runsc --oci-seccomp, runc, crun).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace jail {

// null for "none". Throws jail::Error when the policy cannot be expressed in OCI faithfully:
// a runtime never gets a policy that decides differently from the native one.
[[nodiscard]] nlohmann::json oci_seccomp_for(const std::string& policy_name);

}  // namespace jail
