// Parent side: the gVisor back end. The same Spec becomes an OCI bundle in a private directory,
// run by `runsc run` with a private state root; the supervisor then watches the runsc process
// like a native jail's init.
#pragma once

#include <memory>
#include <string>

#include "jail/launch.hpp"
#include "runsc/start_gate.hpp"
#include "temp_dir.hpp"
#include "unique_fd.hpp"

namespace jail {

// Owns the bundle and state directories, the container id and runsc's start gate; removes the
// container (runsc delete --force) and the directories when the run is over, whatever happened.
class RunscSandbox {
 public:
  RunscSandbox(std::string runsc, TempDir dir, std::string id);
  RunscSandbox(const RunscSandbox&) = delete;
  RunscSandbox& operator=(const RunscSandbox&) = delete;
  ~RunscSandbox();

  [[nodiscard]] const std::string& runsc() const { return runsc_; }
  [[nodiscard]] const std::string& id() const { return id_; }
  [[nodiscard]] std::string bundle() const;
  [[nodiscard]] std::string state_root() const;
  [[nodiscard]] RunscStartGate& gate() { return gate_; }
  // Every process of the sandbox is known to be gone (the jail's cgroup, which they all ran in,
  // was empty and removed): its state needs no `runsc delete`, which would spend over a second
  // trying to reach the dead sandbox before it gives up.
  void mark_gone() { gone_ = true; }
  // What the bundle was found to hold (oci::BundleFacts): whether the tool's command is a file
  // in the jail, so that runsc's "cannot load it: no such file" is told apart.
  void set_command_found(bool found) { command_found_ = found; }
  [[nodiscard]] bool command_found() const { return command_found_; }
  // Delivers `signal` to the tool, the container's init (`runsc kill`): signalling `runsc run`
  // itself would end it (SIGTERM, SIGINT, SIGHUP) or be lost (SIGUSR1), and the tool, which a
  // native jail's init forwards them to, would never see them. Waits for runsc (tens of ms);
  // false if it could not deliver (the container not started yet, or gone).
  [[nodiscard]] bool signal_container(int signal) const;

 private:
  std::string runsc_;
  UniqueFd dir_lock_;  // runsc/stale_runs.hpp; released after dir_ is removed
  TempDir dir_;
  std::string id_;
  RunscStartGate gate_;  // in dir_
  bool gone_ = false;
  bool command_found_ = true;
};

// The runsc binary on the usual paths; throws jail::Error naming the package when missing.
[[nodiscard]] std::string find_runsc();

[[nodiscard]] Process launch_runsc(const Spec& spec);

}  // namespace jail
