// Parent side: the mounts that make up a jail's root, in the order the child applies them.
#pragma once

#include <array>

#include "dry_run/recorder.hpp"
#include "identity.hpp"
#include "jail/spec.hpp"
#include "plan_builder.hpp"

namespace jail {

// What of the host the host-minimal root shows (read-only): these directories, these names
// under /etc, and these /dev nodes. The Landlock mode grants the same (landlock_ruleset.hpp).
// The directories programs are loaded from. On a merged-/usr host most are symlinks into /usr,
// recreated as the same symlinks rather than bound.
inline constexpr std::array kSystemDirs = {"/usr",   "/bin",   "/sbin",  "/lib",
                                           "/lib32", "/lib64", "/libx32"};

// What ordinary programs read from /etc: the loader cache, name-service switch, time zone,
// certificates, Debian's alternatives (many /usr/bin names point there), protocol tables.
// Nothing with secrets or host identity (shadow, machine-id, ssh, hostname) is here.
inline constexpr std::array kEtcEntries = {
    "ld.so.cache",   "ld.so.conf",      "ld.so.conf.d",
    "nsswitch.conf", "localtime",       "timezone",
    "ssl",           "ca-certificates", "ca-certificates.conf",
    "alternatives",  "protocols",       "services",
    "host.conf",     "gai.conf",        "mime.types",
    "inputrc",       "python3",         "python3.11",
    "python3.12",    "bash.bashrc",     "profile",
    "issue",         "debian_version",  "os-release",
    "login.defs"};

inline constexpr std::array kDevices = {"null", "zero", "full", "random", "urandom", "tty"};

// The host-minimal root (read-only /usr and friends, a small /etc) or the --rootfs directory,
// then /proc, /dev, /tmp, then the caller's own mounts in the order given. In a dry run
// (`dry_run` set) the writable binds are the recorder's overlays instead. Credential stores at the
// top of a caller's directory bind (kMaskedSecrets) are hidden on top of it: returns their host
// paths.
std::vector<std::string> add_root_layout(PlanBuilder& builder, const Spec& spec,
                                         const Identity& identity,
                                         const dry_run::Recorder* dry_run = nullptr);

}  // namespace jail
