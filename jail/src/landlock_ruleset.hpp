// Parent side of the Landlock mode (Spec::isolation): the tool gets no namespaces, so what it
// may reach on the host's own filesystem is a Landlock ruleset, made here before clone and
// enforced by the tool on itself just before its seccomp filter (child/tool.cpp).
//
// Granted: read and execute on the host-minimal root's parts (root_layout.hpp: /usr and the
// loader's directories, the small /etc set, /dev's few nodes) and /proc; read on read-only
// binds; everything on writable binds and the jail's private temporary directory. A bound
// directory that holds a credential store (kMaskedSecrets) is granted entry by entry instead,
// the store left out: Landlock only grants, and a grant covers all below it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jail/spec.hpp"
#include "unique_fd.hpp"

namespace jail {

// The ABI that scopes signals (and abstract Unix sockets) to the tool's domain; below it the
// filter sends signal calls to the supervisor instead (seccomp/signal_check.hpp).
inline constexpr long kLandlockSignalScopeAbi = 6;

// Landlock's ABI on this kernel (0: none), at most JAIL_LANDLOCK_ABI_MAX when that is set: the
// tests' knob to run the older ABIs' paths on this host.
[[nodiscard]] long landlock_abi_in_use();

struct LandlockRuleset {
  UniqueFd fd;
  long abi = 0;
  bool scopes_signals = false;           // ABI 6: no signal to a process outside the domain
  bool scopes_abstract_sockets = false;  // ABI 6
  bool refuses_tcp = false;              // ABI 4, with Net::none: no TCP bind or connect
  std::vector<std::string> masked;       // the credential stores left out, host paths
};

// Refuses what the Landlock mode cannot keep (jail::Error, step "landlock", saying what to do
// instead): a root caller (the tool would be host root), a dry run, --rootfs, another uid, a
// tmpfs, a bind shown elsewhere than its host path, a read-only bind inside a writable one
// (--protect: grants only add up), --hostname, and --net none without a filter to hold it.
void check_landlock_spec(const Spec& spec);

// Removes the private temporary directories ("jail-tmp-PID-*" in the temp directory) that
// Landlock-mode jails SIGKILLed before they could remove them left: the caller's own, whose jail
// (PID) is gone. Best effort: one it can't remove stays.
void remove_stale_private_tmps();

// The tool's environment with TMPDIR at `dir`, and HOME too where it was the jail's /tmp.
[[nodiscard]] std::vector<std::string> with_private_tmp(std::vector<std::string> env,
                                                        const std::string& dir);

// Throws jail::Error: no Landlock, a path that cannot be opened, a mount the mode cannot
// express (a tmpfs, a bind shown somewhere else than its host path).
[[nodiscard]] LandlockRuleset make_landlock_ruleset(const Spec& spec,
                                                    const std::string& private_tmp);

}  // namespace jail
