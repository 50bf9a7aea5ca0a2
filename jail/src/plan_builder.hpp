// Parent side: turns a Spec into the child's Plan — every string, path and array the child will
// need, owned here so the child (a copy of this memory after clone) never allocates.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "child/plan.hpp"
#include "jail/spec.hpp"

namespace jail {

// What a mount op was for, kept on the parent side to turn a child's failure report into a
// message that names the mount and where it came from.
// The origin of the host-minimal root's own (optional) binds, which the runsc bundle recognises.
inline constexpr const char* kHostMinimalRootOrigin = "the host-minimal root";

struct OpDescription {
  std::string source;
  std::string target;           // absolute, as the user wrote it
  std::string origin;           // "--bind on the command line", "the host-minimal root", ...
  bool follow_symlinks = true;  // a bind's: may its source go through a link
};

class PlanBuilder {
 public:
  PlanBuilder() = default;
  PlanBuilder(const PlanBuilder&) = delete;
  PlanBuilder& operator=(const PlanBuilder&) = delete;

  // Targets are absolute paths inside the jail.
  // `follow_symlinks`: false for the caller's binds (Mount::follow_symlinks), which then may not
  // go through a link.
  void bind(const std::string& source, const std::string& target, bool read_only,
            const std::string& origin, bool follow_symlinks = true);
  // A bind or layer of the caller's (not jail's own): idmapped for a root caller (idmap.hpp).
  void bind_of_caller(const std::string& source, const std::string& target, bool read_only,
                      const std::string& origin, bool follow_symlinks);
  // A dry run's writable view of the host directory `lower`; writes land in `upper`.
  void overlay(const std::string& lower, const std::string& upper, const std::string& work,
               const std::string& target, const std::string& origin);
  void optional_bind(const std::string& source, const std::string& target);
  void device(const std::string& name);  // /dev/NAME bound from the host
  // The file at `target` hidden under the host's /dev/null, read-only: it reads as empty.
  void mask_file(const std::string& target, const std::string& origin);
  void tmpfs(const std::string& target, std::uint64_t size_bytes, unsigned mode, bool read_only,
             bool allow_exec, const std::string& origin);
  void proc(const std::string& target);
  void devpts(const std::string& target);
  void mkdir(const std::string& target);
  void symlink(const std::string& target, const std::string& link_text);
  void file(const std::string& target, std::string contents);

  // Fixes every pointer into the Plan; call once, after the last op.
  child::Plan& finish();
  [[nodiscard]] child::Plan& plan() { return plan_; }
  [[nodiscard]] const std::vector<OpDescription>& descriptions() const { return descriptions_; }

  // Keeps `text` alive for the plan's lifetime and returns a stable C string.
  const char* keep(std::string text);
  void set_argv(const std::vector<std::string>& argv);
  void set_envp(const std::vector<std::string>& env);
  void set_rlimits(std::vector<child::RlimitSetting> rlimits);
  // Each (path, value) becomes a QuotaSetting the init writes.
  void set_quotas(const std::vector<std::pair<std::string, std::string>>& quotas);

 private:
  child::MountOp& add(child::OpKind kind, const std::string& target, const std::string& source,
                      const std::string& origin);

  std::deque<std::string> strings_;  // a deque never moves its elements: c_str()s stay valid
  std::vector<child::MountOp> ops_;
  std::vector<OpDescription> descriptions_;
  std::vector<char*> argv_;
  std::vector<char*> envp_;
  std::vector<child::RlimitSetting> rlimits_;
  std::vector<child::QuotaSetting> quotas_;
  child::Plan plan_;
};

}  // namespace jail
