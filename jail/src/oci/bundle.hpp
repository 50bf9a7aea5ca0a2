// Parent side: an OCI runtime bundle (config.json + rootfs/) equivalent to a native run of the
// same Spec — host-minimal root, binds, tmpfs, cwd, env, identity, rlimits, no capabilities,
// no_new_privs, hostname, namespaces, the seccomp policy — for gVisor's runsc (and runc/crun).
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "jail/spec.hpp"

namespace jail::oci {

// How the host-minimal root's /etc entries reach the tool. `copied`: regular files and small
// directories are placed in the bundle's rootfs (hard links where possible; oci/host_etc.hpp), the
// rest bound — for a bundle run once and removed, as jail's runsc back end does: gVisor's start-up
// pays for every mount. `bound`: every entry is a bind — for an exported bundle, kept and run
// later, maybe elsewhere, which then reads the host's /etc of the day it runs.
enum class HostEtc { copied, bound };

// Writes DIR/config.json and DIR/rootfs (the mount points, links and generated /etc files of the
// host-minimal root; a --rootfs directory is referenced, not copied). Throws jail::Error.
// `seccomp` is the OCI linux.seccomp object, or null for none.
void write_bundle(const Spec& spec, const std::filesystem::path& dir, const nlohmann::json& seccomp,
                  HostEtc host_etc = HostEtc::copied);

// Where a bundle that is run once and removed (jail's runsc back end) is best written: $TMPDIR
// when it is set (the caller's choice), else /dev/shm when it is a writable tmpfs, else empty
// (the temp directory). On a disk file system the bundle's ~20 directories, their removal and
// runsc's state files cost ~7 ms of each start here; in memory next to nothing.
[[nodiscard]] std::filesystem::path run_bundle_parent();

// The config.json alone, for a rootfs at `root_path` (relative to the bundle or absolute).
[[nodiscard]] nlohmann::json make_config(const Spec& spec, const std::string& root_path,
                                         const nlohmann::json& seccomp);

}  // namespace jail::oci
