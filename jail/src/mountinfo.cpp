#include "mountinfo.hpp"

#include <fcntl.h>
#include <sys/stat.h>

namespace jail {

std::string unescape_mountinfo(std::string_view field) {
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      const char a = field[i + 1], b = field[i + 2], c = field[i + 3];
      if (a >= '0' && a <= '3' && b >= '0' && b <= '7' && c >= '0' && c <= '7') {
        out += static_cast<char>((a - '0') * 64 + (b - '0') * 8 + (c - '0'));
        i += 3;
        continue;
      }
    }
    out += field[i];
  }
  return out;
}

std::vector<std::string> mount_points(std::string_view mountinfo) {
  std::vector<std::string> points;
  while (!mountinfo.empty()) {
    const std::size_t end = mountinfo.find('\n');
    std::string_view line = mountinfo.substr(0, end);
    mountinfo.remove_prefix(end == std::string_view::npos ? mountinfo.size() : end + 1);
    // "id parent major:minor root point ...": skip four fields, keep the fifth.
    for (int field = 0; field < 4 && !line.empty(); ++field) {
      const std::size_t space = line.find(' ');
      line.remove_prefix(space == std::string_view::npos ? line.size() : space + 1);
    }
    const std::string_view point = line.substr(0, line.find(' '));
    if (!point.empty()) points.push_back(unescape_mountinfo(point));
  }
  return points;
}

std::optional<std::uint64_t> mount_id_of(int fd) {
  constexpr unsigned kUniqueMountId = 0x4000;  // STATX_MNT_ID_UNIQUE, newer than these headers
  struct statx info {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID | kUniqueMountId, &info) != 0)
    return std::nullopt;
  if ((info.stx_mask & (STATX_MNT_ID | kUniqueMountId)) == 0) return std::nullopt;
  return info.stx_mnt_id;
}

}  // namespace jail
