#include "spec_check.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "jail/error.hpp"

namespace jail {
namespace {

std::string errno_text(int err) { return fmt::format("{}: {}", strerrorname_np(err), std::strerror(err)); }

void check_mount(const Mount& mount, std::vector<std::string>& problems) {
  const std::string where = mount.origin.empty() ? "" : fmt::format(" (from {})", mount.origin);
  const std::string target = normalize_jail_path(mount.target);
  if (target.empty()) {
    problems.push_back(fmt::format(
        "mount target '{}' must be an absolute path inside the jail without '..'{}", mount.target,
        where));
  } else if (target == "/") {
    problems.push_back(
        fmt::format("cannot mount over the jail's root '/'{}: use --rootfs DIR for a prepared root", where));
  }
  if (mount.kind == MountKind::tmpfs) {
    if (mount.size_bytes && *mount.size_bytes == 0) {
      problems.push_back(fmt::format("tmpfs at {} has size 0{}", mount.target, where));
    }
    return;
  }
  struct stat info {};
  if (mount.source.empty() || mount.source.front() != '/') {
    problems.push_back(fmt::format("bind source '{}' must be an absolute path{}", mount.source, where));
  } else if (::stat(mount.source.c_str(), &info) != 0) {
    const int err = errno;
    problems.push_back(fmt::format("cannot bind {} at {}: {}: {}{}", mount.source, mount.target,
                                   errno_text(err),
                                   err == ENOENT ? "the source does not exist" : "the source cannot be reached",
                                   where));
  }
}

}  // namespace

std::string normalize_jail_path(const std::string& path) {
  if (path.empty() || path.front() != '/') return {};
  std::string result;
  std::istringstream parts(path);
  std::string part;
  while (std::getline(parts, part, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return {};
    result += '/';
    result += part;
  }
  return result.empty() ? "/" : result;
}

void check_spec(const Spec& spec) {
  std::vector<std::string> problems;
  if (spec.argv.empty() || spec.argv.front().empty()) {
    problems.emplace_back("no command to run: put it after '--', e.g. jail -- python3 script.py");
  }
  for (const auto& entry : spec.env) {
    if (entry.find('=') == std::string::npos || entry.front() == '=') {
      problems.push_back(fmt::format("environment entry '{}' is not KEY=VALUE", entry));
    }
  }
  if (spec.hostname.empty() || spec.hostname.size() > 64) {
    problems.push_back(fmt::format("hostname '{}' must be 1 to 64 characters", spec.hostname));
  }
  if (normalize_jail_path(spec.cwd).empty()) {
    problems.push_back(fmt::format("working directory '{}' must be an absolute path without '..'", spec.cwd));
  }
  if (spec.tmp_size_bytes == 0) problems.emplace_back("the size of /tmp must be greater than 0");
  if (spec.rootfs) {
    struct stat info {};
    if (::stat(spec.rootfs->c_str(), &info) != 0) {
      const int err = errno;
      problems.push_back(fmt::format("cannot use --rootfs {}: {}", *spec.rootfs, errno_text(err)));
    } else if (!S_ISDIR(info.st_mode)) {
      problems.push_back(fmt::format("cannot use --rootfs {}: it is not a directory", *spec.rootfs));
    }
  }
  for (const Mount& mount : spec.mounts) check_mount(mount, problems);
  if (problems.empty()) return;

  std::string message = problems.front();
  for (std::size_t i = 1; i < problems.size(); ++i) message += "\njail: " + problems[i];
  throw Error("spec", EINVAL, message);
}

}  // namespace jail
