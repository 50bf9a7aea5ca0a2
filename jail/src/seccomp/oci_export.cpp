#include "seccomp/oci_export.hpp"

#include <cerrno>

#include <fmt/format.h>

#include "jail/error.hpp"

namespace jail {

nlohmann::json oci_seccomp_for(const std::string& policy_name) {
  if (policy_name == "none") return nullptr;
  throw Error("policy", ENOTSUP,
              fmt::format("policy {} cannot be handed to an OCI runtime yet (no OCI export of jail "
                          "policies); use --policy none with --runtime runsc, where gVisor's "
                          "kernel is the boundary",
                          policy_name));
}

}  // namespace jail
