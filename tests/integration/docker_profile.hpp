// Docker's default seccomp profile around jail (issue 44): the JSON from Debian's
// golang-github-docker-docker-dev, put in place by scripts/install-deps.sh, loaded by the
// seccomp_profile probe (jail's own importer, no jail baseline) for an unprivileged caller.
#pragma once

#include <string>
#include <vector>

namespace jail_test {

// Where scripts/install-deps.sh puts the profile.
inline constexpr const char* kDockerProfile =
    "/usr/local/share/jail/test/docker-default-seccomp.json";

// Why the Docker profile's tests cannot run here (the file is missing), or empty.
std::string docker_profile_missing();
// The RunOptions::wrapper that runs jail under the profile.
std::vector<std::string> docker_profile_wrapper();
// What an unprivileged process meets under the wrapper, when it is not what Docker's profile
// gives (a filter loaded, unshare(CLONE_NEWUSER) EPERM, clone3 ENOSYS); empty when it is. So a
// loader that loads nothing, or too little, fails the tests instead of passing them unconfined.
std::string docker_profile_not_in_force();

}  // namespace jail_test
