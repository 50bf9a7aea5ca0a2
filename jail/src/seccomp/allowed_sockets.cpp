#include "seccomp/allowed_sockets.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "child/syscalls.hpp"
#include "jail/error.hpp"
#include "spec_check.hpp"
#include "unique_fd.hpp"

namespace jail {
namespace {

// The host path a bind shows at the jail path `path`: the bind whose target holds it most
// closely (a bind inside another shows its own source there).
std::string host_path_of(const Spec& spec, const std::string& path) {
  const Mount* best = nullptr;
  std::size_t best_length = 0;
  for (const Mount& mount : spec.mounts) {
    if (mount.kind == MountKind::tmpfs) continue;
    const std::string target = normalize_jail_path(mount.target);
    if (!jail_path_within(path, target) || (best != nullptr && target.size() <= best_length))
      continue;
    best = &mount;
    best_length = target.size();
  }
  if (best == nullptr) return {};
  const std::string rest = path.substr(best_length == 1 ? 0 : best_length);
  return best->source + rest;
}

}  // namespace

std::vector<PinnedSocket> pin_allowed_sockets(const Spec& spec) {
  std::vector<PinnedSocket> pinned;
  for (const std::string& asked : spec.allow_sockets) {
    const std::string path = normalize_jail_path(asked);
    const std::string host = host_path_of(spec, path);
    if (host.empty()) {
      throw Error("spec", ENOENT,
                  fmt::format("--allow-socket {}: no bind shows that path in the jail; bind the "
                              "directory that holds the socket (--ro-bind DIR:DST)",
                              asked));
    }
    const UniqueFd fd(child::sys::openat2(AT_FDCWD, host.c_str(), O_PATH | O_CLOEXEC,
                                          RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS));
    struct stat info {};
    if (!fd.valid() || ::fstat(fd.get(), &info) != 0) {
      const int err = errno;
      throw Error(
          "spec", err,
          fmt::format("--allow-socket {}: cannot open {}: {}{}", asked, host, std::strerror(err),
                      err == ELOOP ? " (a symbolic link on the way: name the socket "
                                     "file itself)"
                                   : ""));
    }
    if (!S_ISSOCK(info.st_mode)) {
      throw Error("spec", ENOTSOCK,
                  fmt::format("--allow-socket {}: {} is not a socket", asked, host));
    }
    pinned.push_back({path, info.st_dev, info.st_ino});
  }
  return pinned;
}

}  // namespace jail
