// A line of a colon-separated system file (/etc/passwd, /etc/group, /etc/subuid) split into its
// fields, empty ones kept: "root:x:0:0::/root:/bin/sh" has seven. Header-only: the CLI reads
// /etc/passwd as jail's core does, as a file (getpwuid would pull NSS into a static binary).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace jail {

[[nodiscard]] inline std::vector<std::string> colon_fields(std::string_view line) {
  std::vector<std::string> fields;
  for (std::size_t start = 0;;) {
    const std::size_t colon = line.find(':', start);
    fields.emplace_back(line.substr(start, colon - start));
    if (colon == std::string_view::npos) return fields;
    start = colon + 1;
  }
}

}  // namespace jail
