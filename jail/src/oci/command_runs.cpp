#include "oci/command_runs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <string_view>

#include "oci/working_directory.hpp"
#include "unique_fd.hpp"

namespace jail::oci {
namespace {

// The longest #! line Linux reads (BINPRM_BUF_SIZE); gVisor reads no more.
constexpr std::size_t kInterpreterLineMax = 256;

enum class FileKind { elf, script, other };

bool executable_by(const struct stat& info, const Identity& identity) {
  if (info.st_uid == identity.uid) return (info.st_mode & S_IXUSR) != 0;
  if (info.st_gid == identity.gid) return (info.st_mode & S_IXGRP) != 0;
  return (info.st_mode & S_IXOTH) != 0;
}

// The file's kind, and for a script its interpreter's path (the first word after "#!").
FileKind kind_of(const std::filesystem::path& host, std::string& interpreter) {
  const UniqueFd file(::open(host.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!file.valid()) return FileKind::other;
  std::array<char, kInterpreterLineMax> head{};
  const ssize_t got = ::read(file.get(), head.data(), head.size());
  if (got < 4) return FileKind::other;
  const std::string_view text(head.data(), static_cast<std::size_t>(got));
  if (text.starts_with("\x7f"
                       "ELF"))
    return FileKind::elf;
  if (!text.starts_with("#!")) return FileKind::other;
  const std::size_t end_of_line = text.find('\n');
  if (end_of_line == std::string_view::npos) return FileKind::other;  // longer than Linux reads
  std::string_view line = text.substr(2, end_of_line - 2);
  const std::size_t start = line.find_first_not_of(" \t");
  if (start == std::string_view::npos) return FileKind::other;
  line.remove_prefix(start);
  interpreter = std::string(line.substr(0, line.find_first_of(" \t")));
  return FileKind::script;
}

// The host file a path in the jail names, if it is one the identity may run.
std::optional<std::filesystem::path> runnable(const CommandLookup& lookup,
                                              const std::string& path) {
  const std::optional<HostFile> file =
      host_file_in_jail(lookup.plan, lookup.descriptions, lookup.in_rootfs, lookup.root, path);
  struct stat info {};
  if (!file || !file->allow_exec || ::stat(file->path.c_str(), &info) != 0 ||
      !S_ISREG(info.st_mode) || !executable_by(info, lookup.identity)) {
    return std::nullopt;
  }
  return file->path;
}

bool known_to_run(const CommandLookup& lookup, const std::string& path) {
  const std::optional<std::filesystem::path> host = runnable(lookup, path);
  if (!host) return false;
  std::string interpreter;
  switch (kind_of(*host, interpreter)) {
    case FileKind::elf:
      return true;
    case FileKind::script: {
      // One level, as far as it is checked here: an interpreter that is itself a script is
      // left to the runtime.
      std::string ignored;
      const std::optional<std::filesystem::path> interpreter_host =
          interpreter.starts_with('/') ? runnable(lookup, interpreter) : std::nullopt;
      return interpreter_host && kind_of(*interpreter_host, ignored) == FileKind::elf;
    }
    case FileKind::other:
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
    const std::string candidate = std::string(entry) + "/" + command;
    if (host_file_in_jail(lookup.plan, lookup.descriptions, lookup.in_rootfs, lookup.root,
                          in_cwd(candidate))) {
      if (!known_to_run(lookup, in_cwd(candidate))) return std::nullopt;
      return in_cwd(candidate);
    }
  }
  return std::nullopt;
}

}  // namespace jail::oci
