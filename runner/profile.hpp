// `--profile FILE`: the run flags written down in TOML, so a team can review and reuse them.
// Keys are the run flags without their dashes (`memory = "512M"`, `ro-bind = ["/data"]`,
// `[env]` for --env); flags on the command line override the profile's, and list flags
// (bind, ro-bind, tmpfs, env, pass-env, rlimit) add to it, the profile's first.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jail::runner {

// One flag as the profile sets it, with where it was written ("p.toml:3:1").
struct ProfileSetting {
  std::string flag;                  // "--memory", "--no-cwd"
  std::optional<std::string> value;  // none for switches
  std::string where;
};

struct Profile {
  std::string file;
  std::vector<ProfileSetting> settings;  // in file order; list keys give one per element
};

// Every unknown key, wrong type or unreadable value is collected and reported together in one
// UsageError, each as "FILE:LINE:COL: what is wrong; what to write instead". Relative paths
// (bind and ro-bind sources, rootfs, a policy file, audit-log, log-file, status-file,
// session-dir) are
// taken relative to the profile's own directory.
[[nodiscard]] Profile load_profile(const std::string& path);
[[nodiscard]] Profile parse_profile(std::string_view text, const std::string& path);

// The status-file the profile at `path` names, as load_profile would resolve it, even when
// another of its settings is wrong: the usage failure that setting causes is reported there
// too. nullopt when the profile names none or cannot be read as TOML at all.
[[nodiscard]] std::optional<std::string> profile_status_file(const std::string& path) noexcept;

// The flags a profile may set (all run flags but --profile, --status-fd and --log-fd, which
// name this invocation's own descriptors), for --help and the docs.
[[nodiscard]] std::vector<std::string_view> profile_keys();

}  // namespace jail::runner
