// Reading a policy or a seccomp profile the user names: only a regular file of a sane size. An
// ifstream read a directory as an empty policy ("no 'default' line"), a FIFO without a writer
// forever, and /dev/zero until memory ran out.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace jail::policy {

// Larger than any policy or profile people write (Docker's default profile is ~20 KiB).
inline constexpr std::size_t kMaxPolicyFileBytes = std::size_t{16} << 20;

// The file's text; nullopt with `why` ("it is a directory; give a file", "Permission denied")
// otherwise, for the caller's "cannot read FILE: ".
[[nodiscard]] std::optional<std::string> read_text_file(const std::string& path, std::string& why);

}  // namespace jail::policy
