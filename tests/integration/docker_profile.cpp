#include "docker_profile.hpp"

#include <sys/stat.h>

#include "run_jail.hpp"

namespace jail_test {

std::string docker_profile_missing() {
  struct stat st {};
  if (::stat(kDockerProfile, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) return "";
  return std::string(kDockerProfile) +
         " is missing: scripts/install-deps.sh puts Docker's default seccomp profile there (from "
         "Debian's golang-github-docker-docker-dev)";
}

std::vector<std::string> docker_profile_wrapper() {
  return {std::string(JAIL_PROBE_DIR) + "/seccomp_profile", kDockerProfile};
}

std::string docker_profile_not_in_force() {
  std::string command = "setpriv --reuid=" + std::to_string(kNobodyUid) +
                        " --regid=" + std::to_string(kNobodyGid) + " --clear-groups";
  for (const std::string& word : docker_profile_wrapper()) command += " '" + word + "'";
  command +=
      " sh -c 'grep ^Seccomp: /proc/self/status; unshare --user true; echo unshare=$?; "
      "exec \"" +
      std::string(JAIL_PROBE_DIR) + "/sc_clone3\"'";  // quoted: the build may sit in "jail ci"
  const std::string out = shell_output(command);
  const bool in_force = out.find("Seccomp:\t2") != std::string::npos &&
                        out.find("Operation not permitted") != std::string::npos &&
                        out.find("unshare=1") != std::string::npos &&
                        out.find("clone3 ret=-1 errno=38") != std::string::npos &&
                        out.find("clone3_newuser ret=-1 errno=38") != std::string::npos;
  return in_force ? "" : "under " + command + ":\n" + out;
}

}  // namespace jail_test
