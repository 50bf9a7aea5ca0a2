#include "mount_flags.hpp"

#include <filesystem>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "run_options.hpp"
#include "units.hpp"

namespace jail::runner {
namespace {

// "SRC[:DST]" split at the first ':' that is not written "\:", which stands for a ':' in a path.
std::pair<std::string, std::optional<std::string>> split_bind(const std::string& text) {
  std::string parts[2];
  int part = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == ':') {
      parts[part] += ':';
      ++i;
    } else if (text[i] == ':' && part == 0) {
      part = 1;
    } else {
      parts[part] += text[i];
    }
  }
  if (part == 0) return {parts[0], std::nullopt};
  return {parts[0], parts[1]};
}

}  // namespace

std::string absolute_host_path(const std::string& path) {
  return std::filesystem::absolute(path).lexically_normal().string();
}

std::string host_path_key(const std::string& path) {
  std::string key = absolute_host_path(path);
  while (key.size() > 1 && key.back() == '/') key.pop_back();
  return key;
}

// SRC[:DST]; DST defaults to SRC.
Mount parse_bind(const std::string& text, MountKind kind, const char* flag,
                 const std::string& from) {
  const auto [source, target] = split_bind(text);
  // Checked before the source is made absolute, which an empty path cannot be.
  if (source.empty() || (target && target->empty())) {
    throw UsageError(fmt::format(
        "{} '{}': expected SRC[:DST], neither empty (write a ':' in a path as \\:)", flag, text));
  }
  Mount mount;
  mount.kind = kind;
  mount.source = absolute_host_path(source);
  mount.target = target ? *target : mount.source;
  mount.origin = fmt::format("{} {} {}", flag, text, from);
  return mount;
}

Mount parse_tmpfs(const std::string& text, const std::string& from) {
  const auto colon = text.find(':');
  Mount mount;
  mount.kind = MountKind::tmpfs;
  mount.target = text.substr(0, colon);
  mount.origin = fmt::format("--tmpfs {} {}", text, from);
  if (colon != std::string::npos) {
    mount.size_bytes = parse_size(text.substr(colon + 1));
    if (!mount.size_bytes) {
      throw UsageError(fmt::format("--tmpfs '{}': size '{}' is not a size like 64M or 1G", text,
                                   text.substr(colon + 1)));
    }
  }
  return mount;
}

// A mount on the place of an earlier one, or on a directory above it, hides it from the tool: on
// one command line that is a slip, so it is said. Over a profile's mount it is how the command
// line changes the profile, and goes unsaid.
void warn_of_hidden_mounts(const std::vector<Mount>& mounts, const std::vector<bool>& from_profile,
                           std::vector<std::string>& warnings) {
  const auto place = [](const std::string& target) {
    std::string normal = std::filesystem::path(target).lexically_normal().string();
    while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
    return normal;
  };
  for (std::size_t later = 1; later < mounts.size(); ++later) {
    const std::string over = place(mounts[later].target);
    for (std::size_t earlier = 0; earlier < later; ++earlier) {
      if (from_profile[earlier] && !from_profile[later]) continue;
      const std::string under = place(mounts[earlier].target);
      if (under != over && !under.starts_with(over == "/" ? over : over + "/")) continue;
      warnings.push_back(
          fmt::format("{} is hidden by {}, mounted later on {}: the tool sees only the later one; "
                      "drop one, or give them in the other order",
                      mounts[earlier].origin, mounts[later].origin,
                      under == over ? "the same place" : "a directory above it"));
    }
  }
}

namespace {

bool within_dir(const std::string& path, const std::string& dir) {
  return path == dir || (path.starts_with(dir) && (dir == "/" || path[dir.size()] == '/'));
}

}  // namespace

void add_protected(std::vector<Mount>& mounts, const std::vector<std::string>& subpaths) {
  for (const std::string& subpath : subpaths) {
    const std::string host = host_path_key(subpath);
    std::error_code error;
    if (!std::filesystem::exists(std::filesystem::symlink_status(host, error))) {
      throw UsageError(fmt::format("--protect {}: {} does not exist", subpath, host));
    }
    // The last bind that shows it is the one the tool sees there.
    const Mount* shown_by = nullptr;
    for (const Mount& mount : mounts) {
      if (mount.kind == MountKind::tmpfs) continue;
      if (within_dir(host, host_path_key(mount.source))) shown_by = &mount;
    }
    if (shown_by == nullptr || shown_by->kind != MountKind::bind) {
      throw UsageError(fmt::format(
          "--protect {}: {} is {}; --protect makes part of a writable bind read-only, as in "
          "--bind . --protect .git",
          subpath, host,
          shown_by == nullptr ? "in no bind of the jail"
                              : "in the read-only bind of " + shown_by->source + " already"));
    }
    const std::string source = host_path_key(shown_by->source);
    std::string target = shown_by->target;
    while (target.size() > 1 && target.back() == '/') target.pop_back();
    const std::string below = host.substr(source == "/" ? 0 : source.size());
    target = target == "/" ? (below.empty() ? target : below) : target + below;
    mounts.push_back(Mount::ro_bind(host, target, "--protect " + subpath));
  }
}

}  // namespace jail::runner
