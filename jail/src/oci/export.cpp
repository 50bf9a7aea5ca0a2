#include <cerrno>

#include "jail/error.hpp"
#include "jail/oci.hpp"
#include "oci/bundle.hpp"
#include "seccomp/oci_export.hpp"
#include "spec_check.hpp"

namespace jail {

namespace {

// What a bundle cannot carry is refused, not dropped: the runtime that runs it would not hold a
// limit that was asked for, or would run the tool as someone it was not meant to be.
void check_exportable(const Spec& spec) {
  const auto refuse = [](const std::string& what) { throw Error("spec", EINVAL, what); };
  if (spec.dry_run) {
    refuse(
        "an OCI bundle cannot carry a dry run (its overlay and session are jail's own); "
        "export without --dry-run");
  }
  // The bundle has no user namespace (runsc makes its own; runc and crun would need an id
  // mapping the host may not have): its uid and gid are the host's, for every file the tool
  // reaches through a mount.
  if (asks_for_root_ids(spec)) {
    refuse(
        "--uid 0 or --gid 0 in an OCI bundle would be the host's root for every file the "
        "tool reaches (the bundle has no user namespace); give another uid and gid");
  }
  if (spec.limits.timeout) {
    refuse(
        "--timeout cannot be carried by an OCI bundle (the runtime has no wall-clock limit); "
        "enforce it where the bundle runs, or leave it out");
  }
  if (spec.max_output_bytes) {
    refuse(
        "--max-output cannot be carried by an OCI bundle (the runtime passes the tool's "
        "output through uncut); leave it out");
  }
  if (spec.cgroup_parent) {
    refuse(
        "--cgroup-parent names a cgroup of this host; where the bundle runs, the runtime places "
        "its cgroup (runc and crun take --cgroup-parent, or set linux.cgroupsPath); leave it out");
  }
  if (spec.trace_timing) {
    refuse("--trace-timing times a run, and export-oci runs nothing; leave it out");
  }
  if (spec.input == Input::none) {
    refuse(
        "--stdin none cannot be carried by an OCI bundle (the runtime gives the tool its "
        "own stdin); run it with </dev/null instead");
  }
}

}  // namespace

void export_oci_bundle(const Spec& spec, const std::string& bundle_dir) {
  check_spec(spec);
  check_exportable(spec);
  // `--runtime runsc` names the runtime the bundle is for: gVisor reads a seccomp profile its
  // own way (policy/oci.hpp), and the form for every runtime stops glibc's threads there.
  const OciReader reader =
      spec.runtime == Runtime::runsc ? OciReader::runsc : OciReader::any_runtime;
  // Kept and run later, maybe on another host: binds read that host's /etc when it runs.
  const nlohmann::json profile = oci_seccomp_for(spec.policy, reader).profile;
  oci::write_bundle(spec, bundle_dir, {.profile = [&] { return profile; }}, oci::BundleUse::kept);
}

}  // namespace jail
