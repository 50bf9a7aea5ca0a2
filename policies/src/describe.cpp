#include "policy/describe.hpp"

#include <linux/audit.h>

#include <cstdio>
#include <string_view>

#include "arch.hpp"
#include "policy/constants.hpp"
#include "policy/syscalls.hpp"

namespace jail::policy {
namespace {

enum class Kind { value, flags };

// Which argument of which syscall takes constants from which family (by name prefix).
struct ArgNames {
  std::string_view syscall;
  int arg;
  std::string_view prefix;
  Kind kind;
};
constexpr ArgNames kArgNames[] = {
    {"ptrace", 0, "PTRACE_", Kind::value},   {"socket", 0, "AF_", Kind::value},
    {"socketpair", 0, "AF_", Kind::value},   {"clone", 0, "CLONE_", Kind::flags},
    {"unshare", 0, "CLONE_", Kind::flags},   {"setns", 1, "CLONE_", Kind::flags},
    {"ioctl", 1, "T", Kind::value},          {"ioctl", 1, "FIO", Kind::value},
    {"personality", 0, "PER_", Kind::value}, {"prctl", 0, "PR_", Kind::value},
    {"seccomp", 0, "SECCOMP_", Kind::value}, {"seccomp", 1, "SECCOMP_FILTER_FLAG_", Kind::flags},
    {"kill", 1, "SIG", Kind::value},         {"tgkill", 2, "SIG", Kind::value},
    {"tkill", 1, "SIG", Kind::value},        {"fcntl", 1, "F_", Kind::value},
    {"mmap", 2, "PROT_", Kind::flags},       {"mprotect", 2, "PROT_", Kind::flags},
    {"mmap", 3, "MAP_", Kind::flags},
};

std::string number(std::uint64_t v) {
  char buf[32];
  if (v < 4096) {
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
  } else {
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  }
  return buf;
}

std::string named_value(std::uint64_t v, std::string_view prefix) {
  for (const auto& c : all_constants())
    if (c.value == v && c.name.starts_with(prefix)) return std::string(c.name);
  return "";
}

// Single-bit constants of the family, then whatever is left as a number (clone's exit signal).
std::string named_flags(std::uint64_t v, std::string_view prefix) {
  std::string out;
  std::uint64_t rest = v;
  for (const auto& c : all_constants()) {
    bool single_bit = c.value != 0 && (c.value & (c.value - 1)) == 0;
    if (!single_bit || !c.name.starts_with(prefix) || (rest & c.value) == 0) continue;
    out += (out.empty() ? "" : "|") + std::string(c.name);
    rest &= ~c.value;
  }
  if (out.empty()) return "";
  if (rest != 0) {
    std::string signal = rest < 65 ? named_value(rest, "SIG") : "";
    out += "|" + (signal.empty() ? number(rest) : signal);
  }
  return out;
}

std::string argument(std::string_view name, int index, std::uint64_t v, bool narrow) {
  if (narrow) v &= 0xffffffffULL;
  for (const auto& a : kArgNames) {
    if (a.syscall != name || a.arg != index) continue;
    std::string named = a.kind == Kind::value ? named_value(v, a.prefix) : named_flags(v, a.prefix);
    if (!named.empty()) return named;
  }
  return number(v);
}

}  // namespace

std::string call_name(const struct seccomp_data& data) {
  if (data.arch == AUDIT_ARCH_I386) return "i386 syscall " + std::to_string(data.nr);
  if (data.arch != AUDIT_ARCH_X86_64) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "syscall %d of foreign architecture 0x%x", data.nr, data.arch);
    return buf;
  }
  const auto nr = static_cast<std::uint32_t>(data.nr);
  if ((nr & detail::kX32SyscallBit) != 0)
    return "x32 syscall " + std::to_string(nr & ~detail::kX32SyscallBit);
  return syscall_name(data.nr);
}

std::string describe_call(const struct seccomp_data& data) {
  const auto nr = static_cast<std::uint32_t>(data.nr);
  if (data.arch != AUDIT_ARCH_X86_64 || (nr & detail::kX32SyscallBit) != 0) return call_name(data);
  std::string name = syscall_name(data.nr);
  int last = -1;
  for (int i = 0; i < 6; ++i)
    if (data.args[i] != 0) last = i;
  std::string out = name + "(";
  for (int i = 0; i <= last; ++i) {
    if (i != 0) out += ", ";
    out += argument(name, i, data.args[i], is_32bit_argument(data.nr, i));
  }
  return out + ")";
}

std::string describe_decision(const struct seccomp_data& data, const Decision& decision) {
  std::string outcome;
  switch (decision.action.kind) {
    case ActionKind::allow:
      outcome = "allowed";
      break;
    case ActionKind::log:
      outcome = "allowed and logged";
      break;
    case ActionKind::kill:
      outcome = "killed";
      break;
    case ActionKind::trap:
      outcome = "trapped (SIGSYS)";
      break;
    case ActionKind::errno_code:
      outcome = to_string(decision.action);
      break;
  }
  std::string where = decision.where.file;
  if (decision.where.line > 0) where += ":" + std::to_string(decision.where.line);
  return describe_call(data) + " by policy " + where + (decision.by_default ? " (default)" : "") +
         " → " + outcome;
}

}  // namespace jail::policy
