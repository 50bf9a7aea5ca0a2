#include "runsc/policy_loader.hpp"

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "jail/error.hpp"
#include "unique_fd.hpp"
#include "write_all.hpp"

namespace jail {
namespace {

[[noreturn]] void fail(const std::filesystem::path& what) {
  throw Error(
      "bundle", errno,
      fmt::format("cannot write jail's policy loader {}: {}", what.string(), std::strerror(errno)));
}

// A new file at `path` holding `size` bytes, with `mode` set explicitly (an open's mode is
// masked by the caller's umask, and a loader the tool's uid cannot run fails every run).
void write_file(const std::filesystem::path& path, const void* data, std::size_t size,
                mode_t mode) {
  const UniqueFd file(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!file.valid() || !write_all(file.get(), data, size) || ::fchmod(file.get(), mode) != 0)
    fail(path);
}

}  // namespace

bool loadable_in_gvisor(const policy::Program& program) {
  return std::none_of(program.instructions.begin(), program.instructions.end(),
                      [](const sock_filter& instruction) {
                        return instruction.code == (BPF_RET | BPF_K) &&
                               (instruction.k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_LOG;
                      });
}

void write_policy_loader(const std::filesystem::path& rootfs, const policy::Program& program) {
  const std::filesystem::path dir = rootfs / kPolicyLoaderDirectory.substr(1);
  if (::mkdir(dir.c_str(), 0700) != 0 || ::chmod(dir.c_str(), 0755) != 0) fail(dir);
  write_file(rootfs / kPolicyLoaderPath.substr(1), kPolicyLoaderProgram, kPolicyLoaderProgramSize,
             0555);
  write_file(rootfs / kPolicyProgramPath.substr(1), program.instructions.data(),
             program.instructions.size() * sizeof(sock_filter), 0444);
}

}  // namespace jail
