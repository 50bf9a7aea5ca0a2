// Run on the host, around jail: `seccomp_profile PROFILE.json COMMAND [ARGS...]` runs COMMAND
// under a Docker-style seccomp profile as Docker loads it into a container, here Docker's own
// default profile for the Landlock mode's tests. The profile is read by jail's own importer
// (what `jail policy import` runs), for a container with Docker's default capabilities, and
// compiled without jail's baseline: with it, namespace flags on clone would be killed, not
// refused with EPERM as under Docker. Then no_new_privs, the filter, and exec, as runc does for
// the container's first process; nothing below can remove it.
// `seccomp_profile --print PROFILE.json` writes the policy it loads, for a reader.
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <string>

#include "policy/compile.hpp"
#include "policy/oci.hpp"
#include "policy/policy.hpp"
#include "policy/text_file.hpp"

namespace {

namespace policy = jail::policy;

// What `docker run` gives a container (Docker 20.10's defaults), against which the profile's
// includes and excludes are resolved. Of these only CAP_SYS_CHROOT opens an entry (chroot):
// without CAP_SYS_ADMIN the container gets the rules for containers without it.
constexpr const char* kDockerCapabilities[] = {
    "CAP_CHOWN",   "CAP_DAC_OVERRIDE", "CAP_FSETID",           "CAP_FOWNER",
    "CAP_MKNOD",   "CAP_NET_RAW",      "CAP_SETGID",           "CAP_SETUID",
    "CAP_SETFCAP", "CAP_SETPCAP",      "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT",
    "CAP_KILL",    "CAP_AUDIT_WRITE"};

// The profile as policy text, without the baseline; nullopt after saying why on stderr.
std::optional<std::string> imported(const std::string& file) {
  std::string why;
  const std::optional<std::string> json = policy::read_text_file(file, why);
  if (!json) {
    std::fprintf(stderr, "seccomp_profile: cannot read %s: %s\n", file.c_str(), why.c_str());
    return std::nullopt;
  }
  policy::ImportTarget target;
  target.capabilities.assign(std::begin(kDockerCapabilities), std::end(kDockerCapabilities));
  target.baseline = policy::Baseline::none;
  try {
    return policy::import_oci_seccomp(*json, file, target);
  } catch (const policy::ImportError& e) {
    std::fprintf(stderr, "seccomp_profile: %s\n", e.what());
    return std::nullopt;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool print = argc == 3 && std::strcmp(argv[1], "--print") == 0;
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: seccomp_profile PROFILE.json COMMAND [ARGS...]\n"
                 "       seccomp_profile --print PROFILE.json\n");
    return 2;
  }
  const std::string file = argv[print ? 2 : 1];
  const std::optional<std::string> text = imported(file);
  if (!text) return 2;
  if (print) {
    std::fputs(text->c_str(), stdout);
    return 0;
  }
  policy::LoadResult loaded = policy::try_parse_policy(*text, file, ".", policy::Baseline::none);
  if (!loaded.policy) {
    std::fputs(policy::format(loaded.diagnostics).c_str(), stderr);
    return 2;
  }
  policy::Program program;
  try {
    program = policy::compile(*loaded.policy, policy::Routing::direct);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "seccomp_profile: cannot compile %s: %s\n", file.c_str(), e.what());
    return 2;
  }
  sock_fprog fprog = program.fprog();
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0) {
    std::fprintf(stderr, "seccomp_profile: cannot load the filter: %s\n", std::strerror(errno));
    return 2;
  }
  ::execvp(argv[2], argv + 2);
  std::fprintf(stderr, "seccomp_profile: cannot run %s: %s\n", argv[2], std::strerror(errno));
  return 127;
}
