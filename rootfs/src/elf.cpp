#include "rootfs/elf.hpp"

#include "fd.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace jail::rootfs {
namespace {

// Reads what it is asked for with pread, never the whole file: a root's libraries can be
// hundreds of MiB (a 516 MiB one took jail rootfs check to 1 GB RSS when read whole), and the
// loader's view of a file is a few KiB of headers and strings.
class Reader {
 public:
  // Bounds on what a crafted file can make this read: no real object comes near them.
  static constexpr std::size_t kMaxString = 64 * 1024;
  static constexpr std::uint64_t kMaxTable = 1 << 20;

  Reader(int fd, const std::filesystem::path& file) : fd_(fd), file_(file) {
    struct stat info {};
    if (::fstat(fd, &info) != 0)
      throw std::runtime_error(fmt::format("cannot read {}: {}", file.string(), strerror(errno)));
    size_ = static_cast<std::uint64_t>(info.st_size);
  }

  template <typename T>
  T at(std::uint64_t offset) const {
    T value;
    if (offset > size_ || size_ - offset < sizeof(T) || !read(&value, sizeof(T), offset)) {
      throw std::runtime_error(fmt::format("{}: truncated ELF file", file_.string()));
    }
    return value;
  }

  // Up to `count` entries of T from `offset`: those the file holds, at most kMaxTable bytes.
  template <typename T>
  std::vector<T> table_at(std::uint64_t offset, std::uint64_t count) const {
    const std::uint64_t in_file = offset > size_ ? 0 : (size_ - offset) / sizeof(T);
    std::vector<T> entries(std::min({count, in_file, kMaxTable / sizeof(T)}));
    if (!read(entries.data(), entries.size() * sizeof(T), offset))
      throw std::runtime_error(fmt::format("{}: truncated ELF file", file_.string()));
    return entries;
  }

  std::string string_at(std::uint64_t offset) const {
    if (offset >= size_)
      throw std::runtime_error(fmt::format("{}: bad string offset", file_.string()));
    std::string text;
    std::array<char, 256> chunk;
    while (offset < size_) {
      const std::size_t want = std::min<std::uint64_t>(chunk.size(), size_ - offset);
      if (!read(chunk.data(), want, offset))
        throw std::runtime_error(fmt::format("{}: truncated ELF file", file_.string()));
      const std::size_t length = strnlen(chunk.data(), want);
      text.append(chunk.data(), length);
      if (length < want) break;
      if (text.size() > kMaxString)
        throw std::runtime_error(fmt::format("{}: overlong ELF string", file_.string()));
      offset += want;
    }
    return text;
  }

  [[nodiscard]] bool starts_with_magic() const {
    std::array<char, SELFMAG> magic;
    return size_ >= SELFMAG && read(magic.data(), magic.size(), 0) &&
           std::memcmp(magic.data(), ELFMAG, SELFMAG) == 0;
  }

 private:
  bool read(void* into, std::size_t bytes, std::uint64_t offset) const {
    auto* out = static_cast<char*>(into);
    while (bytes > 0) {
      const ssize_t got = ::pread(fd_, out, bytes, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      out += got;
      bytes -= static_cast<std::size_t>(got);
      offset += static_cast<std::uint64_t>(got);
    }
    return true;
  }

  int fd_;
  std::filesystem::path file_;
  std::uint64_t size_ = 0;
};

std::vector<std::string> split_path_list(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ':');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// Dynamic-section addresses are virtual; the file offset comes from the PT_LOAD that holds them.
std::uint64_t file_offset(const std::vector<Elf64_Phdr>& loads, std::uint64_t address,
                          const std::filesystem::path& file) {
  for (const auto& load : loads) {
    if (address >= load.p_vaddr && address < load.p_vaddr + load.p_filesz) {
      return address - load.p_vaddr + load.p_offset;
    }
  }
  throw std::runtime_error(
      fmt::format("{}: dynamic string table outside every segment", file.string()));
}

}  // namespace

std::optional<ElfInfo> read_elf(const std::filesystem::path& file) {
  const Fd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    throw std::runtime_error(fmt::format("cannot read {}: {}", file.string(), strerror(errno)));
  return read_elf(fd.get(), file);
}

std::optional<ElfInfo> read_elf(int fd, const std::filesystem::path& file) {
  const Reader elf(fd, file);
  if (!elf.starts_with_magic()) return std::nullopt;
  const auto header = elf.at<Elf64_Ehdr>(0);
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_machine != EM_X86_64) {
    throw std::runtime_error(fmt::format(
        "{}: not an x86-64 ELF object; jail builds roots for this machine's architecture only",
        file.string()));
  }
  std::vector<Elf64_Phdr> loads;
  std::optional<Elf64_Phdr> dynamic;
  ElfInfo info;
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    const auto phdr = elf.at<Elf64_Phdr>(header.e_phoff + std::uint64_t{i} * header.e_phentsize);
    if (phdr.p_type == PT_LOAD) loads.push_back(phdr);
    if (phdr.p_type == PT_DYNAMIC) dynamic = phdr;
    if (phdr.p_type == PT_INTERP) info.interpreter = elf.string_at(phdr.p_offset);
  }
  if (!dynamic) return info;

  std::vector<Elf64_Dyn> entries;
  std::uint64_t strtab = 0;
  const std::uint64_t count = dynamic->p_filesz / sizeof(Elf64_Dyn);
  const auto table = elf.table_at<Elf64_Dyn>(dynamic->p_offset, count);
  bool ended = false;
  for (const auto& entry : table) {
    if (entry.d_tag == DT_NULL) {
      ended = true;
      break;
    }
    if (entry.d_tag == DT_STRTAB) strtab = entry.d_un.d_ptr;
    entries.push_back(entry);
  }
  if (!ended && table.size() < count) {
    throw std::runtime_error(
        fmt::format("{}: truncated or oversized dynamic section", file.string()));
  }
  if (strtab == 0) return info;
  const std::uint64_t strings = file_offset(loads, strtab, file);
  for (const auto& entry : entries) {
    const auto text = [&] { return elf.string_at(strings + entry.d_un.d_val); };
    if (entry.d_tag == DT_NEEDED) info.needed.push_back(text());
    if (entry.d_tag == DT_RPATH) info.rpath = split_path_list(text());
    if (entry.d_tag == DT_RUNPATH) info.runpath = split_path_list(text());
  }
  return info;
}

}  // namespace jail::rootfs
