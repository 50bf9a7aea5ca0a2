// Host side: the helper's command line, as jail passes it.
#pragma once

#include <sys/types.h>

#include <optional>
#include <vector>

#include "egress/address_guard.hpp"
#include "egress/allow_entry.hpp"

namespace jail::egress {

struct Options {
  int listen_fd = -1;  // a listening TCP socket (in the tool's network namespace)
  int report_fd = -1;  // a connected AF_UNIX stream socket to jail
  std::optional<uid_t> uid;
  std::optional<gid_t> gid;
  PrivateRanges private_ranges = PrivateRanges::refused;
  std::vector<AllowEntry> entries;
};

// Throws SetupError on a bad command line; prints help and exits 0 for --help.
[[nodiscard]] Options parse_options(int argc, char** argv);

}  // namespace jail::egress
