// The steps of setting up a jail, shared by the parent and the child side so that a failure
// reported as a number over the handshake pipe is named the same way in every message.
#pragma once

#include <cstdint>
#include <string_view>

namespace jail {

enum class Step : std::int32_t {
  wait_for_parent,
  close_inherited_fds,
  mount_private,
  open_bind_source,
  restrict_bind_source,
  mount_overlay,
  stage_root,
  create_mount_target,
  mount,
  write_file,
  make_read_only,
  pivot_root,
  detach_old_root,
  hostname,
  loopback_up,
  cwd,
  securebits,
  drop_bounding_set,
  setgroups,
  setgid,
  setuid,
  drop_capabilities,
  no_new_privs,
  verify_identity,
  not_dumpable,
  signal_setup,
  fork_tool,
  setsid,
  terminal,
  seccomp_listener,
  rlimits,
  seccomp,
  exec,
  cgroup_attach,  // v1: the init joining its cgroups, first thing after the go byte (and runsc)
  // Under --runtime runsc: its keeper (runsc/keeper.hpp), then runsc's process before its exec.
  keeper_session,
  keeper_subreaper,
  start_runsc,
  runsc_session,
  runsc_mount_namespace,  // the namespace its binds of the bundle's rootfs are made in
  runsc_fds,
  exec_runsc,
  session_keyring,  // the init joining a fresh session keyring of its own
  user_quotas,      // the init setting its user namespace's inotify/fanotify limits
  landlock_scope,   // the tool's Landlock domain scoping abstract Unix sockets
  layer_store,      // a capped dry run's tmpfs of layers, made and handed to the parent
  landlock,         // the Landlock mode's tool confining itself (landlock_restrict_self)
  subreaper,        // the Landlock mode's init becoming its descendants' reaper
  egress_listener,  // the init's listener for the egress proxy, in the tool's network
};

[[nodiscard]] std::string_view step_name(Step);

}  // namespace jail
