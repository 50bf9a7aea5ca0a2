// Parent side: an OCI runtime bundle (config.json + rootfs/) equivalent to a native run of the
// same Spec — host-minimal root, binds, tmpfs, cwd, env, identity, rlimits, no capabilities,
// no_new_privs, hostname, namespaces, the seccomp policy — for gVisor's runsc (and runc/crun).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "child/plan.hpp"
#include "jail/spec.hpp"
#include "plan_builder.hpp"
#include "policy/compile.hpp"

namespace jail::oci {

// What the bundle is for. `run_once`: run by jail's runsc back end and removed (RunBundle) — the
// read-only binds runsc's own process makes in the rootfs are left out of config.json, since
// gVisor's start-up pays for every mount it lists (oci/host_side_binds.hpp); and config.json is
// written without indentation, since every runsc process parses it again at each start. `kept`:
// exported, read by people and run later, maybe elsewhere — every bind is in config.json and
// config.json is indented.
enum class BundleUse { run_once, kept };

// What writing a bundle learnt of the jail it lays out, for telling a failure apart later.
struct BundleFacts {
  // The command, when given as a path (relative ones from the working directory), names a file
  // in the jail; always true for a bare name, which the runtime looks for on PATH itself. The
  // runtime's "cannot load it: no such file" then means its #! interpreter or ELF loader is
  // missing, as a native run tells (runsc says the same words for both).
  bool command_found = true;
  // The tool is started by jail's policy loader, which loads BundleSeccomp::program inside the
  // sandbox; config.json then has no linux.seccomp.
  bool policy_in_sandbox = false;
};

// The seccomp policy a bundle carries.
struct BundleSeccomp {
  // The OCI linux.seccomp object the runtime loads (null, or no function, for none); asked for
  // only when the bundle uses it.
  std::function<nlohmann::json()> profile;
  // A jail runsc run's policy compiled with direct actions, for jail's policy loader
  // (runsc/policy_loader.hpp). Used instead of `profile` when the bundle can start the command
  // that way: a BundleUse::run_once bundle of the host-minimal root (not --rootfs, which jail
  // does not write into), a command known to run (oci/command_runs.hpp) and nothing mounted
  // over the loader's directory.
  const policy::Program* program = nullptr;
};

// Writes DIR/config.json and DIR/rootfs (the mount points, links and generated /etc files of the
// host-minimal root; a --rootfs directory is referenced, not copied). Throws jail::Error.
BundleFacts write_bundle(const Spec& spec, const std::filesystem::path& dir,
                         const BundleSeccomp& seccomp, BundleUse use);

struct Layout;  // the native run's mount plan for a Spec (bundle.cpp)

// A BundleUse::run_once bundle in two steps, so that most of it is written while runsc starts:
// planned before runsc's process is cloned — the layout, the bundle's directory and rootfs, and
// the binds that process makes itself (host_binds) — then written.
class RunBundle {
 public:
  // Makes `dir` (new or empty) and its rootfs. Throws jail::Error.
  RunBundle(const Spec& spec, std::filesystem::path dir);
  ~RunBundle();
  RunBundle(const RunBundle&) = delete;
  RunBundle& operator=(const RunBundle&) = delete;

  // Each op of the layout, for naming the one a failure report points at.
  [[nodiscard]] const std::vector<OpDescription>& descriptions() const;
  // What runsc's process binds before its exec (none for a --rootfs, which jail does not write
  // into). Points into this object, which must outlive the clone.
  [[nodiscard]] child::HostBinds host_binds();
  // The rest of the bundle, for the same `spec`: the rootfs's entries and config.json. On
  // failure what was written goes again, the directory with it when it was made here.
  BundleFacts write(const Spec& spec, const BundleSeccomp& seccomp);

 private:
  std::filesystem::path dir_;
  std::string rootfs_;
  bool made_dir_ = false;
  std::unique_ptr<Layout> layout_;
  std::unique_ptr<bool[]> host_side_;
};

// Where a bundle that is run once and removed (jail's runsc back end) is best written: $TMPDIR
// when it is set (the caller's choice), else /dev/shm when it is a writable tmpfs, else empty
// (the temp directory). On a disk file system the bundle's ~20 directories, their removal and
// runsc's state files cost ~7 ms of each start here; in memory next to nothing.
[[nodiscard]] std::filesystem::path run_bundle_parent();

// The config.json alone, for a rootfs at `root_path` (relative to the bundle or absolute).
[[nodiscard]] nlohmann::json make_config(const Spec& spec, const std::string& root_path,
                                         const nlohmann::json& seccomp);

}  // namespace jail::oci
