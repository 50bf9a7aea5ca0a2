#include "layer_overlay.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace jail {
bool layer_overlays_possible() {
  static const bool possible = [] {
    const UniqueFd fs(::fsopen("overlay", FSOPEN_CLOEXEC));
    const UniqueFd dir(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    // An older overlayfs knows no "lowerdir+" (6.8) or refuses a descriptor for it (EINVAL).
    return fs.valid() && dir.valid() &&
           ::fsconfig(fs.get(), FSCONFIG_SET_FD, "lowerdir+", nullptr, dir.get()) == 0;
  }();
  return possible;
}

UniqueFd make_layer_store(std::uint64_t size_bytes) {
  const UniqueFd fs(::fsopen("tmpfs", FSOPEN_CLOEXEC));
  if (!fs.valid()) return {};
  const std::string size = std::to_string(size_bytes);
  if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, "size", size.c_str(), 0) != 0 ||
      ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "mode", "0700", 0) != 0 ||
      ::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
    return {};
  return UniqueFd(::fsmount(fs.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV));
}

UniqueFd make_layer_overlay(int lower, int upper, int work) {
  const UniqueFd fs(::fsopen("overlay", FSOPEN_CLOEXEC));
  if (!fs.valid()) return {};
  if (::fsconfig(fs.get(), FSCONFIG_SET_FD, "lowerdir+", nullptr, lower) != 0 ||
      ::fsconfig(fs.get(), FSCONFIG_SET_FD, "upperdir", nullptr, upper) != 0 ||
      ::fsconfig(fs.get(), FSCONFIG_SET_FD, "workdir", nullptr, work) != 0 ||
      ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "redirect_dir", "on", 0) != 0 ||
      ::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
    return {};
  return UniqueFd(::fsmount(fs.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV));
}

}  // namespace jail
