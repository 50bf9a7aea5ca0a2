#include "oci/command_runs.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "oci/working_directory.hpp"
#include "unique_fd.hpp"

namespace jail::oci {
namespace {

// The longest #! line Linux reads (BINPRM_BUF_SIZE); gVisor reads no more.
constexpr std::size_t kInterpreterLineMax = 256;

// What an exec of a file would load, as far as it is checked here.
struct Loaded {
  enum class Kind { elf, script, other } kind = Kind::other;
  std::string interpreter;  // ELF: its PT_INTERP path (empty: none); script: the #! path
};

bool executable_by(const struct stat& info, const Identity& identity) {
  if (info.st_uid == identity.uid) return (info.st_mode & S_IXUSR) != 0;
  if (info.st_gid == identity.gid) return (info.st_mode & S_IXGRP) != 0;
  return (info.st_mode & S_IXOTH) != 0;
}

bool read_at(int fd, void* into, std::size_t size, off_t offset) {
  return ::pread(fd, into, size, offset) == static_cast<ssize_t>(size);
}

// A 64-bit x86-64 executable or shared object, with its PT_INTERP path; anything else (another
// architecture, a 32-bit file, a damaged header) is Kind::other.
Loaded elf_of(int fd) {
  Elf64_Ehdr header{};
  if (!read_at(fd, &header, sizeof header, 0) || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_machine != EM_X86_64 || (header.e_type != ET_EXEC && header.e_type != ET_DYN) ||
      header.e_phentsize != sizeof(Elf64_Phdr)) {
    return {};
  }
  Loaded loaded{Loaded::Kind::elf, {}};
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment{};
    if (!read_at(fd, &segment, sizeof segment,
                 static_cast<off_t>(header.e_phoff + i * sizeof segment)))
      return {};
    if (segment.p_type != PT_INTERP) continue;
    if (segment.p_filesz == 0 || segment.p_filesz > PATH_MAX) return {};
    std::string path(segment.p_filesz, '\0');
    if (!read_at(fd, path.data(), path.size(), static_cast<off_t>(segment.p_offset))) return {};
    path.resize(std::strlen(path.c_str()));
    loaded.interpreter = std::move(path);
  }
  return loaded;
}

// A "#!" script's interpreter (the first word after "#!").
Loaded script_of(std::string_view head) {
  const std::size_t end_of_line = head.find('\n');
  if (end_of_line == std::string_view::npos) return {};  // longer than Linux reads
  std::string_view line = head.substr(2, end_of_line - 2);
  const std::size_t start = line.find_first_not_of(" \t");
  if (start == std::string_view::npos) return {};
  line.remove_prefix(start);
  return {Loaded::Kind::script, std::string(line.substr(0, line.find_first_of(" \t")))};
}

// What an exec of the host file `host` would load, if the jail's identity may run it: opened
// without following a link and as a path first, so that nothing but a regular file is ever
// opened for reading (what a shared bind holds may change under the walk).
std::optional<Loaded> load_of(const HostFile& host, const Identity& identity) {
  if (!host.allow_exec) return std::nullopt;
  const UniqueFd path(::open(host.path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  struct stat info {};
  if (!path.valid() || ::fstat(path.get(), &info) != 0 || !S_ISREG(info.st_mode) ||
      !executable_by(info, identity)) {
    return std::nullopt;
  }
  const UniqueFd file(
      ::open(fmt::format("/proc/self/fd/{}", path.get()).c_str(), O_RDONLY | O_CLOEXEC));
  std::array<char, kInterpreterLineMax> head{};
  const ssize_t got = file.valid() ? ::pread(file.get(), head.data(), head.size(), 0) : -1;
  if (got < 4) return std::nullopt;
  const std::string_view text(head.data(), static_cast<std::size_t>(got));
  if (text.starts_with("\x7f"
                       "ELF"))
    return elf_of(file.get());
  if (text.starts_with("#!")) return script_of(text);
  return Loaded{};
}

// Whether an exec of `path` in the jail is known to load; `depth` counts the interpreters
// followed (a script's, then an ELF file's loader), which is as far as it is checked.
bool known_to_run(const CommandLookup& lookup, const std::string& path, int depth = 0) {
  const std::optional<HostFile> host =
      host_file_in_jail(lookup.plan, lookup.descriptions, lookup.root, path);
  const std::optional<Loaded> loaded = host ? load_of(*host, lookup.identity) : std::nullopt;
  if (!loaded) return false;
  switch (loaded->kind) {
    case Loaded::Kind::elf:
      // The dynamic loader is itself ELF with no loader of its own.
      if (loaded->interpreter.empty()) return true;
      return depth < 2 && loaded->interpreter.starts_with('/') &&
             known_to_run(lookup, loaded->interpreter, depth + 1);
    case Loaded::Kind::script:
      // A script's interpreter must be ELF: a script run by a script is left to the runtime.
      return depth == 0 && loaded->interpreter.starts_with('/') &&
             known_to_run(lookup, loaded->interpreter, depth + 1);
    case Loaded::Kind::other:
      return false;
  }
  return false;
}

}  // namespace

std::optional<std::string> command_known_to_run(const CommandLookup& lookup,
                                                const std::string& command) {
  if (command.empty()) return std::nullopt;
  const auto in_cwd = [&](const std::string& path) {
    return path.starts_with('/') ? path : lookup.cwd + "/" + path;
  };
  if (command.find('/') != std::string::npos) {
    if (!known_to_run(lookup, in_cwd(command))) return std::nullopt;
    return command;
  }
  // execvp's search: the first entry that holds the name decides (an unrunnable one there is
  // not known to fail the same way in the runtime's own search, so it is left to it).
  std::string_view entries = lookup.path_env;
  while (!entries.empty()) {
    const std::size_t colon = entries.find(':');
    const std::string_view entry = entries.substr(0, colon);
    entries.remove_prefix(colon == std::string_view::npos ? entries.size() : colon + 1);
    if (entry.empty()) return std::nullopt;  // the working directory: left to the runtime
    const std::string candidate = in_cwd(std::string(entry) + "/" + command);
    if (exists_in_jail(lookup.plan, lookup.descriptions, lookup.root, candidate)) {
      if (!known_to_run(lookup, candidate)) return std::nullopt;
      return candidate;
    }
  }
  return std::nullopt;
}

}  // namespace jail::oci
