#include "jail/limits.hpp"

#include <array>
#include <cctype>
#include <utility>

namespace jail {
namespace {

constexpr std::array<std::pair<std::string_view, int>, 16> kRlimits = {{
    {"as", RLIMIT_AS},
    {"core", RLIMIT_CORE},
    {"cpu", RLIMIT_CPU},
    {"data", RLIMIT_DATA},
    {"fsize", RLIMIT_FSIZE},
    {"locks", RLIMIT_LOCKS},
    {"memlock", RLIMIT_MEMLOCK},
    {"msgqueue", RLIMIT_MSGQUEUE},
    {"nice", RLIMIT_NICE},
    {"nofile", RLIMIT_NOFILE},
    {"nproc", RLIMIT_NPROC},
    {"rss", RLIMIT_RSS},
    {"rtprio", RLIMIT_RTPRIO},
    {"rttime", RLIMIT_RTTIME},
    {"sigpending", RLIMIT_SIGPENDING},
    {"stack", RLIMIT_STACK},
}};

}  // namespace

std::string_view to_string(Limit limit) {
  switch (limit) {
    case Limit::memory:
      return "memory";
    case Limit::pids:
      return "pids";
    case Limit::wall_time:
      return "wall_time";
    case Limit::cpu_time:
      return "cpu_time";
    case Limit::file_size:
      return "file_size";
    case Limit::output:
      return "output";
    case Limit::tmpfs:
      return "tmpfs";
    case Limit::open_files:
      return "open_files";
    case Limit::dry_run_size:
      return "dry_run_size";
  }
  return "unknown";
}

std::optional<int> rlimit_resource(std::string_view name) {
  for (const auto& [known, resource] : kRlimits) {
    if (known == name) return resource;
  }
  return std::nullopt;
}

std::string_view rlimit_name(int resource) {
  for (const auto& [name, known] : kRlimits) {
    if (known == resource) return name;
  }
  return "unknown";
}

std::string rlimit_constant_name(int resource) {
  std::string name = "RLIMIT_";
  for (const char c : rlimit_name(resource))
    name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace jail
