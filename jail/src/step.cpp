#include "step.hpp"

namespace jail {

std::string_view step_name(Step step) {
  switch (step) {
    case Step::wait_for_parent:
      return "wait_for_parent";
    case Step::close_inherited_fds:
      return "close_inherited_fds";
    case Step::mount_private:
      return "mount_private";
    case Step::open_bind_source:
      return "open_bind_source";
    case Step::restrict_bind_source:
      return "restrict_bind_source";
    case Step::mount_overlay:
      return "mount_overlay";
    case Step::layer_store:
      return "layer_store";
    case Step::landlock:
      return "landlock";
    case Step::subreaper:
      return "subreaper";
    case Step::stage_root:
      return "stage_root";
    case Step::create_mount_target:
      return "create_mount_target";
    case Step::mount:
      return "mount";
    case Step::write_file:
      return "write_file";
    case Step::make_read_only:
      return "make_read_only";
    case Step::pivot_root:
      return "pivot_root";
    case Step::detach_old_root:
      return "detach_old_root";
    case Step::hostname:
      return "hostname";
    case Step::session_keyring:
      return "session_keyring";
    case Step::user_quotas:
      return "user_quotas";
    case Step::landlock_scope:
      return "landlock_scope";
    case Step::loopback_up:
      return "loopback_up";
    case Step::egress_listener:
      return "egress_listener";
    case Step::cwd:
      return "cwd";
    case Step::securebits:
      return "securebits";
    case Step::drop_bounding_set:
      return "drop_bounding_set";
    case Step::setgroups:
      return "setgroups";
    case Step::setgid:
      return "setgid";
    case Step::setuid:
      return "setuid";
    case Step::drop_capabilities:
      return "drop_capabilities";
    case Step::no_new_privs:
      return "no_new_privs";
    case Step::verify_identity:
      return "verify_identity";
    case Step::not_dumpable:
      return "not_dumpable";
    case Step::signal_setup:
      return "signal_setup";
    case Step::fork_tool:
      return "fork_tool";
    case Step::setsid:
      return "setsid";
    case Step::terminal:
      return "terminal";
    case Step::seccomp_listener:
      return "seccomp_listener";
    case Step::rlimits:
      return "rlimits";
    case Step::seccomp:
      return "seccomp";
    case Step::exec:
      return "exec";
    case Step::cgroup_attach:
      return "cgroup attach";
    case Step::keeper_session:
      return "keeper_session";
    case Step::keeper_subreaper:
      return "keeper_subreaper";
    case Step::start_runsc:
      return "start_runsc";
    case Step::runsc_session:
      return "runsc_session";
    case Step::runsc_mount_namespace:
      return "runsc_mount_namespace";
    case Step::runsc_fds:
      return "runsc_fds";
    case Step::exec_runsc:
      return "exec_runsc";
  }
  return "unknown";
}

}  // namespace jail
