#include "policy/value_names.hpp"

#include <fcntl.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <vector>

#include "policy/constants.hpp"

namespace jail::policy {
namespace {

enum class Shape : std::uint8_t {
  one_of,      // exactly one named value (a request, a command, a family)
  flags,       // bits, each named
  open_flags,  // an access mode (O_RDONLY …) and bits
  clone_flags  // bits, and a signal in the low byte (SIGCHLD for a fork)
};

struct ArgumentNames {
  std::string_view syscall;
  int arg;
  Shape shape;
  std::array<std::string_view, 3> prefixes;
};

constexpr std::array<ArgumentNames, 13> kArguments = {{
    {"ioctl", 1, Shape::one_of, {"TC", "TIOC", "FIO"}},
    {"socket", 0, Shape::one_of, {"AF_", "", ""}},
    {"socket", 1, Shape::flags, {"SOCK_", "", ""}},
    {"socketpair", 0, Shape::one_of, {"AF_", "", ""}},
    {"socketpair", 1, Shape::flags, {"SOCK_", "", ""}},
    {"clone", 0, Shape::clone_flags, {"CLONE_", "", ""}},
    {"unshare", 0, Shape::flags, {"CLONE_", "", ""}},
    {"prctl", 0, Shape::one_of, {"PR_", "", ""}},
    {"ptrace", 0, Shape::one_of, {"PTRACE_", "", ""}},
    {"fcntl", 1, Shape::one_of, {"F_", "", ""}},
    {"madvise", 2, Shape::one_of, {"MADV_", "", ""}},
    {"open", 1, Shape::open_flags, {"O_", "", ""}},
    {"openat", 2, Shape::open_flags, {"O_", "", ""}},
}};

// Second names of one value, and masks that are not a flag: the first name is the one written.
constexpr std::array<std::string_view, 6> kNotWritten = {"AF_LOCAL", "TIOCINQ", "O_ACCMODE",
                                                         "O_RDONLY", "CSIGNAL", "O_LARGEFILE"};

bool written(std::string_view name) {
  return std::find(kNotWritten.begin(), kNotWritten.end(), name) == kNotWritten.end();
}

std::vector<NamedConstant> named(const ArgumentNames& argument) {
  std::vector<NamedConstant> list;
  for (const auto& constant : all_constants()) {
    const bool prefixed =
        std::any_of(argument.prefixes.begin(), argument.prefixes.end(),
                    [&](std::string_view p) { return !p.empty() && constant.name.starts_with(p); });
    if (prefixed && written(constant.name)) list.push_back(constant);
  }
  return list;
}

std::string number(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%#llx", static_cast<unsigned long long>(value));
  return text;
}

std::string one_of(const std::vector<NamedConstant>& names, std::uint64_t value) {
  for (const auto& n : names) {
    if (n.value == value) return std::string(n.name);
  }
  return number(value);
}

// The widest names first, so O_SYNC is one name rather than O_DSYNC and a bit left over.
std::vector<std::string> bit_names(std::vector<NamedConstant> names, std::uint64_t& bits) {
  std::stable_sort(names.begin(), names.end(), [](const auto& a, const auto& b) {
    return std::popcount(a.value) > std::popcount(b.value);
  });
  std::vector<std::string> parts;
  for (const auto& n : names) {
    if (n.value != 0 && (bits & n.value) == n.value) {
      parts.emplace_back(n.name);
      bits &= ~n.value;
    }
  }
  return parts;
}

std::string joined(std::vector<std::string> parts, std::uint64_t rest) {
  if (rest != 0 || parts.empty()) parts.push_back(number(rest));
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : " | ") + part;
  return text;
}

std::string signal_name(std::uint64_t signal) {
  for (const auto& n : all_constants()) {
    if (n.name.starts_with("SIG") && !n.name.starts_with("SIG_") && n.value == signal)
      return std::string(n.name);
  }
  return number(signal);
}

}  // namespace

std::string value_text(std::string_view syscall, int arg, std::uint64_t value) {
  for (const auto& argument : kArguments) {
    if (argument.syscall != syscall || argument.arg != arg) continue;
    const std::vector<NamedConstant> names = named(argument);
    std::uint64_t bits = value;
    switch (argument.shape) {
      case Shape::one_of:
        return one_of(names, value);
      case Shape::flags: {
        // Named first: joined() must see only the bits no name took.
        std::vector<std::string> parts = bit_names(names, bits);
        return joined(std::move(parts), bits);
      }
      case Shape::open_flags: {
        std::vector<std::string> parts;
        const std::uint64_t mode = value & O_ACCMODE;
        parts.push_back(mode == O_RDONLY ? "O_RDONLY" : one_of(names, mode));
        bits &= ~static_cast<std::uint64_t>(O_ACCMODE);
        for (auto& part : bit_names(names, bits)) parts.push_back(std::move(part));
        return joined(std::move(parts), bits);
      }
      case Shape::clone_flags: {
        constexpr std::uint64_t kSignalByte = 0xff;  // CSIGNAL: the signal sent at the child's exit
        const std::uint64_t signal = value & kSignalByte;
        bits &= ~kSignalByte;
        std::vector<std::string> parts = bit_names(names, bits);
        if (signal != 0) parts.push_back(signal_name(signal));
        return joined(std::move(parts), bits);
      }
    }
  }
  return number(value);
}

}  // namespace jail::policy
