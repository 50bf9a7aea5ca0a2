#include "rootfs/resolver.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

namespace jail::rootfs {
namespace {

// glibc's cache format "glibc-ld.so.cache1.1": a header, then fixed entries whose key and value
// are offsets of NUL-terminated strings from the start of the file.
constexpr char kMagic[] = "glibc-ld.so.cache1.1";
constexpr std::int32_t kTypeMask = 0x00ff;
constexpr std::int32_t kElfLibc6 = 0x0003;
constexpr std::int32_t kArchMask = 0xff00;
constexpr std::int32_t kX8664Lib64 = 0x0300;

struct Header {
  char magic[sizeof kMagic - 1];
  std::uint32_t count;
  std::uint32_t string_length;
  std::uint8_t flags;
  std::uint8_t padding[3];
  std::uint32_t extension_offset;
  std::uint32_t unused[3];
};

struct Entry {
  std::int32_t flags;
  std::uint32_t key;
  std::uint32_t value;
  std::uint32_t os_version;
  std::uint64_t hwcap;
};

constexpr std::array<const char*, 6> kDefaultDirs = {"/lib/x86_64-linux-gnu",
                                                     "/usr/lib/x86_64-linux-gnu",
                                                     "/lib64",
                                                     "/usr/lib64",
                                                     "/lib",
                                                     "/usr/lib"};

bool usable(const std::filesystem::path& path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error);
}

}  // namespace

bool is_default_library_dir(const std::filesystem::path& dir) {
  const std::filesystem::path normal = dir.lexically_normal();
  for (const char* known : kDefaultDirs) {
    if (normal == known) return true;
  }
  return false;
}

std::string expand_origin(const std::string& entry, const std::filesystem::path& origin) {
  std::string out = entry;
  for (const std::string token : {"${ORIGIN}", "$ORIGIN"}) {
    for (auto at = out.find(token); at != std::string::npos; at = out.find(token)) {
      out.replace(at, token.size(), origin.string());
    }
  }
  return out;
}

LibraryResolver::LibraryResolver(const std::filesystem::path& ld_so_cache) {
  std::ifstream in(ld_so_cache, std::ios::binary);
  if (!in) return;
  std::ostringstream data;
  data << in.rdbuf();
  const std::string bytes = data.str();
  if (bytes.size() < sizeof(Header) || std::memcmp(bytes.data(), kMagic, sizeof kMagic - 1) != 0)
    return;
  Header header;
  std::memcpy(&header, bytes.data(), sizeof header);
  for (std::uint32_t i = 0; i < header.count; ++i) {
    const std::size_t offset = sizeof(Header) + std::size_t{i} * sizeof(Entry);
    if (offset + sizeof(Entry) > bytes.size()) break;
    Entry entry;
    std::memcpy(&entry, bytes.data() + offset, sizeof entry);
    if ((entry.flags & kTypeMask) != kElfLibc6 || (entry.flags & kArchMask) != kX8664Lib64)
      continue;
    if (entry.key >= bytes.size() || entry.value >= bytes.size()) continue;
    const std::string key(bytes.data() + entry.key);
    const std::string value(bytes.data() + entry.value);
    cache_.emplace(key, value);  // the first entry for a name wins, as in ld.so
  }
}

std::optional<std::filesystem::path> LibraryResolver::find(
    const std::string& soname, const std::filesystem::path& object, const ElfInfo& info,
    const std::vector<std::string>& inherited_rpath) const {
  if (soname.find('/') != std::string::npos) {
    if (usable(soname)) return std::filesystem::path(soname);
    return std::nullopt;
  }
  const std::filesystem::path origin = object.parent_path();
  auto search = [&](const std::vector<std::string>& dirs) -> std::optional<std::filesystem::path> {
    for (const auto& dir : dirs) {
      const std::filesystem::path candidate =
          std::filesystem::path(expand_origin(dir, origin)) / soname;
      if (usable(candidate)) return candidate.lexically_normal();
    }
    return std::nullopt;
  };
  if (info.runpath.empty()) {
    if (auto found = search(info.rpath)) return found;
    if (auto found = search(inherited_rpath)) return found;
  } else if (auto found = search(info.runpath)) {
    return found;
  }
  if (auto it = cache_.find(soname); it != cache_.end() && usable(it->second)) return it->second;
  return search(std::vector<std::string>(kDefaultDirs.begin(), kDefaultDirs.end()));
}

}  // namespace jail::rootfs
