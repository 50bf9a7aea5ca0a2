// Export a Spec as an OCI runtime bundle (config.json + rootfs/) that runsc, runc and crun run
// with the same namespaces, mounts, limits and seccomp policy as jail itself.
#pragma once

#include <string>

#include "jail/spec.hpp"

namespace jail {

// Throws jail::Error (e.g. when the policy cannot be expressed in OCI faithfully).
void export_oci_bundle(const Spec& spec, const std::string& bundle_dir);

}  // namespace jail
