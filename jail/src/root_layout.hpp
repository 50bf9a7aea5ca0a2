// Parent side: the mounts that make up a jail's root, in the order the child applies them.
#pragma once

#include "dry_run/recorder.hpp"
#include "identity.hpp"
#include "jail/spec.hpp"
#include "plan_builder.hpp"

namespace jail {

// The host-minimal root (read-only /usr and friends, a small /etc) or the --rootfs directory,
// then /proc, /dev, /tmp, then the caller's own mounts in the order given. In a dry run
// (`dry_run` set) the writable binds are the recorder's overlays instead. Credential stores at the
// top of a caller's directory bind (kMaskedSecrets) are hidden on top of it: returns their host
// paths.
std::vector<std::string> add_root_layout(PlanBuilder& builder, const Spec& spec,
                                         const Identity& identity,
                                         const dry_run::Recorder* dry_run = nullptr);

}  // namespace jail
