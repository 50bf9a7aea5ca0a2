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

bool loadable_in_gvisor(const policy::Program& program) {
  return std::none_of(program.instructions.begin(), program.instructions.end(),
                      [](const sock_filter& instruction) {
                        return instruction.code == (BPF_RET | BPF_K) &&
                               (instruction.k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_LOG;
                      });
}

std::string policy_program_entry(const policy::Program& program) {
  constexpr char kDigits[] = "0123456789abcdef";
  const auto* bytes = reinterpret_cast<const unsigned char*>(program.instructions.data());
  const std::size_t size = program.instructions.size() * sizeof(sock_filter);
  std::string entry(kPolicyProgramVariable);
  entry += '=';
  entry.reserve(entry.size() + 2 * size);
  for (std::size_t i = 0; i < size; ++i) {
    entry += kDigits[bytes[i] >> 4];
    entry += kDigits[bytes[i] & 0xf];
  }
  return entry;
}

void write_policy_loader(const std::filesystem::path& rootfs) {
  const std::filesystem::path dir = rootfs / kPolicyLoaderDirectory.substr(1);
  const std::filesystem::path path = rootfs / kPolicyLoaderPath.substr(1);
  const auto fail = [&](const std::filesystem::path& what) {
    throw Error("bundle", errno,
                fmt::format("cannot write jail's policy loader {}: {}", what.string(),
                            std::strerror(errno)));
  };
  if (::mkdir(dir.c_str(), 0755) != 0) fail(dir);
  const UniqueFd file(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0555));
  if (!file.valid()) fail(path);
  if (!write_all(file.get(), kPolicyLoaderProgram, kPolicyLoaderProgramSize)) fail(path);
}

}  // namespace jail
