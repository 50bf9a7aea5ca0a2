#include <cerrno>

#include "jail/error.hpp"
#include "jail/oci.hpp"
#include "oci/bundle.hpp"
#include "seccomp/oci_export.hpp"
#include "spec_check.hpp"

namespace jail {

void export_oci_bundle(const Spec& spec, const std::string& bundle_dir) {
  check_spec(spec);
  if (spec.dry_run) {
    throw Error("spec", EINVAL,
                "an OCI bundle cannot carry a dry run (its overlay and session are jail's own); "
                "export without --dry-run");
  }
  // `--runtime runsc` names the runtime the bundle is for: gVisor reads a seccomp profile its
  // own way (policy/oci.hpp), and the form for every runtime stops glibc's threads there.
  const OciReader reader =
      spec.runtime == Runtime::runsc ? OciReader::runsc : OciReader::any_runtime;
  // Kept and run later, maybe on another host: binds read that host's /etc when it runs.
  oci::write_bundle(spec, bundle_dir, oci_seccomp_for(spec.policy, reader).profile,
                    oci::BundleUse::kept);
}

}  // namespace jail
