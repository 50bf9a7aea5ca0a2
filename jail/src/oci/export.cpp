#include "jail/oci.hpp"
#include "oci/bundle.hpp"
#include "seccomp/oci_export.hpp"
#include "spec_check.hpp"

namespace jail {

void export_oci_bundle(const Spec& spec, const std::string& bundle_dir) {
  check_spec(spec);
  oci::write_bundle(spec, bundle_dir, oci_seccomp_for(spec.policy));
}

}  // namespace jail
