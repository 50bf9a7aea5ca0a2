#include "rootfs/elf.hpp"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace jail::rootfs {
namespace {

class Reader {
 public:
  explicit Reader(const std::filesystem::path& file) : file_(file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error(fmt::format("cannot read {}", file.string()));
    std::ostringstream data;
    data << in.rdbuf();
    bytes_ = data.str();
  }

  template <typename T>
  T at(std::uint64_t offset) const {
    if (offset > bytes_.size() || bytes_.size() - offset < sizeof(T)) {
      throw std::runtime_error(fmt::format("{}: truncated ELF file", file_.string()));
    }
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return value;
  }

  std::string string_at(std::uint64_t offset) const {
    if (offset >= bytes_.size())
      throw std::runtime_error(fmt::format("{}: bad string offset", file_.string()));
    const char* start = bytes_.data() + offset;
    return std::string(start, strnlen(start, bytes_.size() - offset));
  }

  [[nodiscard]] std::size_t size() const { return bytes_.size(); }
  [[nodiscard]] bool starts_with_magic() const {
    return bytes_.size() >= SELFMAG && std::memcmp(bytes_.data(), ELFMAG, SELFMAG) == 0;
  }

 private:
  std::filesystem::path file_;
  std::string bytes_;
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
  const Reader elf(file);
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
  for (std::uint64_t offset = dynamic->p_offset;
       offset + sizeof(Elf64_Dyn) <= dynamic->p_offset + dynamic->p_filesz;
       offset += sizeof(Elf64_Dyn)) {
    const auto entry = elf.at<Elf64_Dyn>(offset);
    if (entry.d_tag == DT_NULL) break;
    if (entry.d_tag == DT_STRTAB) strtab = entry.d_un.d_ptr;
    entries.push_back(entry);
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
