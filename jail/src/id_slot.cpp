#include "id_slot.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "jail/colon_fields.hpp"
#include "jail/error.hpp"

namespace jail {
namespace {

struct IdRange {
  std::uint64_t first = 0;
  std::uint64_t count = 0;
};

std::optional<std::uint64_t> number(const std::string& text) {
  if (text.empty() || text.size() > 10 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoull(text);
}

// Ids the host gives out already: users and groups (field 2: name:x:ID:...), and the
// subordinate ranges of newuidmap (name:FIRST:COUNT).
std::vector<IdRange> ids_in_use() {
  std::vector<IdRange> used;
  for (const char* file : {"/etc/passwd", "/etc/group"}) {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
      const auto fields = colon_fields(line);
      if (fields.size() < 3) continue;
      if (const auto id = number(fields[2])) used.push_back({*id, 1});
    }
  }
  for (const char* file : {"/etc/subuid", "/etc/subgid"}) {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
      const auto fields = colon_fields(line);
      if (fields.size() < 3) continue;
      const auto first = number(fields[1]);
      const auto count = number(fields[2]);
      if (first && count) used.push_back({*first, *count});
    }
  }
  return used;
}

bool in_use(const std::vector<IdRange>& used, std::uint64_t id) {
  for (const IdRange& range : used) {
    if (id >= range.first && id - range.first < range.count) return true;
  }
  return false;
}

[[noreturn]] void unusable(int err, const std::string& what) {
  throw Error("id_slot", err,
              fmt::format("cannot give the jail host ids of its own: {}: {}: {}", what,
                          strerrorname_np(err), std::strerror(err)));
}

UniqueFd open_slots_file() {
  if (::mkdir(kSlotsDir, 0700) != 0 && errno != EEXIST)
    unusable(errno, "mkdir " + std::string(kSlotsDir));
  UniqueFd fd(::open(kSlotsFile, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) unusable(errno, std::string("open ") + kSlotsFile);
  return fd;
}

}  // namespace

IdSlot take_id_slot() {
  const std::vector<IdRange> used = ids_in_use();
  UniqueFd lock = open_slots_file();
  for (std::uint32_t slot = 0; slot < kSlots; ++slot) {
    if (in_use(used, std::uint64_t{kFirstHostId} + slot)) continue;
    struct flock range {};
    range.l_type = F_WRLCK;
    range.l_whence = SEEK_SET;
    range.l_start = static_cast<off_t>(slot);
    range.l_len = 1;
    if (::fcntl(lock.get(), F_OFD_SETLK, &range) == 0) return IdSlot(std::move(lock), slot);
    if (errno != EAGAIN && errno != EACCES) unusable(errno, std::string("lock ") + kSlotsFile);
  }
  throw Error("id_slot", EUSERS,
              fmt::format("cannot give the jail host ids of its own: all {} ids from {} are taken "
                          "by running jails or by the host's users",
                          kSlots, kFirstHostId));
}

}  // namespace jail
