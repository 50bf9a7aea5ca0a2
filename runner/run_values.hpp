// The effective run's values as a reviewer reads them: enum names, mounts and limits in the
// words of jail's flags, shared by `jail explain` and `jail diff` so the two never disagree.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "jail/spec.hpp"

namespace jail::runner {

[[nodiscard]] std::string_view net_name(Net net);
[[nodiscard]] std::string_view isolation_name(Isolation isolation);
[[nodiscard]] std::string_view runtime_name(Runtime runtime);
[[nodiscard]] std::string_view stdio_name(Stdio stdio);
[[nodiscard]] std::string_view input_name(Input input);
// "bind", "ro-bind", "tmpfs": the flag that makes it.
[[nodiscard]] std::string_view mount_kind_name(MountKind kind);

// {"kind", "source", "target", "access": "read-only" | "writable", "size", "follow_symlinks"}.
[[nodiscard]] nlohmann::json mount_json(const Mount& mount);
// "ro-bind /data -> /data, read-only"
[[nodiscard]] std::string mount_text(const Mount& mount);

// Unset (null) is no limit.
[[nodiscard]] nlohmann::json optional_json(const std::optional<std::uint64_t>& value);
// "1073741824 bytes (1.0 GiB)", or "unlimited".
[[nodiscard]] std::string size_text(const std::optional<std::uint64_t>& bytes);

}  // namespace jail::runner
