#include "seccomp/oci_export.hpp"

#include <cerrno>

#include <fmt/format.h>

#include "jail/error.hpp"
#include "policy/diagnostics.hpp"
#include "policy/oci.hpp"
#include "policy/policy.hpp"

namespace jail {

nlohmann::json oci_seccomp_for(const std::string& policy_name) {
  if (policy_name == "none") return nullptr;
  try {
    return policy::export_oci_seccomp(policy::load_policy(policy_name));
  } catch (const policy::PolicyError& error) {
    throw Error("policy", EINVAL,
                fmt::format("cannot use policy {}:\n{}", policy_name, policy::format(error.diagnostics())));
  } catch (const policy::ExportError& error) {
    throw Error("policy", ENOTSUP,
                fmt::format("policy {} cannot be expressed as OCI seccomp faithfully: {}", policy_name,
                            error.what()));
  }
}

}  // namespace jail
