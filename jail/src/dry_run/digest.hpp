// SHA-256 digests for the session manifest: of host files (drift checks), of symlink texts and of
// the spec the run had.
#pragma once

#include <string>
#include <string_view>

namespace jail::dry_run {

// "sha256:<hex>" of the bytes.
[[nodiscard]] std::string sha256_of_text(std::string_view bytes);

// "sha256:<hex>" of what `fd` reads from its current offset to the end; throws jail::Error.
[[nodiscard]] std::string sha256_of_fd(int fd, const std::string& what);

}  // namespace jail::dry_run
