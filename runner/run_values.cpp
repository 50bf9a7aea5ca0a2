#include "run_values.hpp"

#include <fmt/format.h>

#include "units.hpp"

namespace jail::runner {

std::string_view net_name(Net net) {
  return net == Net::host ? "host" : "none";
}

std::string_view isolation_name(Isolation isolation) {
  switch (isolation) {
    case Isolation::namespaces:
      return "namespaces";
    case Isolation::landlock:
      return "landlock";
    case Isolation::automatic:
      break;
  }
  return "auto";
}

std::string_view runtime_name(Runtime runtime) {
  return runtime == Runtime::runsc ? "runsc" : "native";
}

std::string_view stdio_name(Stdio stdio) {
  switch (stdio) {
    case Stdio::pty:
      return "pty";
    case Stdio::pipe:
      return "pipe";
    case Stdio::inherit:
      break;
  }
  return "inherit";
}

std::string_view input_name(Input input) {
  return input == Input::none ? "none" : "inherit";
}

std::string_view mount_kind_name(MountKind kind) {
  switch (kind) {
    case MountKind::bind:
      return "bind";
    case MountKind::tmpfs:
      return "tmpfs";
    case MountKind::ro_bind:
      break;
  }
  return "ro-bind";
}

nlohmann::json mount_json(const Mount& mount) {
  nlohmann::json out = {{"kind", mount_kind_name(mount.kind)},
                        {"target", mount.target},
                        {"access", mount.kind == MountKind::ro_bind ? "read-only" : "writable"}};
  if (mount.kind == MountKind::tmpfs) {
    out["size"] = optional_json(mount.size_bytes);
  } else {
    out["source"] = mount.source;
    out["follow_symlinks"] = mount.follow_symlinks;
  }
  return out;
}

std::string mount_text(const Mount& mount) {
  const std::string_view access = mount.kind == MountKind::ro_bind ? "read-only" : "writable";
  if (mount.kind == MountKind::tmpfs) {
    return fmt::format("tmpfs {}, {}, size {}", mount.target, access,
                       mount.size_bytes ? size_text(mount.size_bytes) : "as /tmp's");
  }
  return fmt::format("{} {} -> {}, {}{}", mount_kind_name(mount.kind), mount.source, mount.target,
                     access, mount.follow_symlinks ? ", symlinks followed" : "");
}

nlohmann::json optional_json(const std::optional<std::uint64_t>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::string size_text(const std::optional<std::uint64_t>& bytes) {
  if (!bytes) return "unlimited";
  return fmt::format("{} bytes ({})", *bytes, human_size(*bytes));
}

}  // namespace jail::runner
