// The compiled program in readable form: one instruction a line, jump targets as labels, and
// a comment saying what each load and constant means (which syscall, which argument half).
#include <linux/audit.h>
#include <linux/seccomp.h>

#include <cstddef>
#include <cstdio>
#include <set>

#include "policy/compile.hpp"
#include "policy/constants.hpp"
#include "policy/syscalls.hpp"

namespace jail::policy {
namespace {

std::string label(std::size_t index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "L%04zu", index);
  return buf;
}

std::string hex(std::uint32_t k) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "#0x%x", k);
  return buf;
}

std::string ret_name(std::uint32_t k) {
  std::uint32_t action = k & SECCOMP_RET_ACTION_FULL;
  std::uint32_t data = k & SECCOMP_RET_DATA;
  switch (action) {
    case SECCOMP_RET_ALLOW:
      return "ALLOW";
    case SECCOMP_RET_KILL_PROCESS:
      return "KILL_PROCESS";
    case SECCOMP_RET_KILL_THREAD:
      return "KILL_THREAD";
    case SECCOMP_RET_LOG:
      return "LOG";
    case SECCOMP_RET_TRAP:
      return "TRAP";
    case SECCOMP_RET_USER_NOTIF:
      return "USER_NOTIF";
    case SECCOMP_RET_ERRNO: {
      std::string_view name = errno_name(static_cast<int>(data));
      return "ERRNO(" + (name.empty() ? std::to_string(data) : std::string(name)) + ")";
    }
    default:
      return hex(k);
  }
}

std::string load_name(std::uint32_t off) {
  if (off == offsetof(struct seccomp_data, nr)) return "nr";
  if (off == offsetof(struct seccomp_data, arch)) return "arch";
  std::uint32_t args = offsetof(struct seccomp_data, args);
  if (off >= args && off < args + 48) {
    std::uint32_t rel = off - args;
    return "arg" + std::to_string(rel / 8) + (rel % 8 == 0 ? " low half" : " high half");
  }
  return "seccomp_data+" + std::to_string(off);
}

}  // namespace

std::string disassemble(const Program& program) {
  const auto& insns = program.instructions;
  std::set<std::size_t> targets;
  for (std::size_t i = 0; i < insns.size(); ++i) {
    const sock_filter& f = insns[i];
    if (BPF_CLASS(f.code) != BPF_JMP) continue;
    if (BPF_OP(f.code) == BPF_JA) {
      targets.insert(i + 1 + f.k);
    } else {
      targets.insert(i + 1 + f.jt);
      targets.insert(i + 1 + f.jf);
    }
  }
  std::string out = "; " + std::to_string(insns.size()) + " instructions, routing " +
                    (program.routing == Routing::notify ? "notify" : "direct") + "\n";
  std::string loaded;  // what A holds, for naming the constants compared against it
  char line[160];
  for (std::size_t i = 0; i < insns.size(); ++i) {
    const sock_filter& f = insns[i];
    if (targets.count(i) != 0) out += label(i) + ":\n";
    std::string text, note;
    switch (BPF_CLASS(f.code)) {
      case BPF_LD:
        text = "ld   [" + std::to_string(f.k) + "]";
        loaded = load_name(f.k);
        note = loaded;
        break;
      case BPF_ALU:
        text = (BPF_OP(f.code) == BPF_AND ? "and  " : "alu? ") + hex(f.k);
        break;
      case BPF_RET:
        text = "ret  " + ret_name(f.k);
        break;
      case BPF_JMP: {
        if (BPF_OP(f.code) == BPF_JA) {
          text = "ja   " + label(i + 1 + f.k);
          break;
        }
        const char* op = BPF_OP(f.code) == BPF_JEQ    ? "jeq "
                         : BPF_OP(f.code) == BPF_JGT  ? "jgt "
                         : BPF_OP(f.code) == BPF_JGE  ? "jge "
                         : BPF_OP(f.code) == BPF_JSET ? "jset"
                                                      : "j?  ";
        text = std::string(op) + " " + hex(f.k) + ", " + label(i + 1 + f.jt) + ", " +
               label(i + 1 + f.jf);
        if (loaded == "nr" && BPF_OP(f.code) != BPF_JSET)
          note = syscall_name(static_cast<int>(f.k));
        if (loaded == "nr" && BPF_OP(f.code) == BPF_JSET) note = "x32 syscall bit";
        if (loaded == "arch") note = f.k == AUDIT_ARCH_X86_64 ? "AUDIT_ARCH_X86_64" : "";
        break;
      }
      default:
        text = "?    code=" + std::to_string(f.code) + " k=" + hex(f.k);
    }
    std::snprintf(line, sizeof line, "  %04zu  %-40s%s%s\n", i, text.c_str(),
                  note.empty() ? "" : "; ", note.c_str());
    out += line;
  }
  return out;
}

}  // namespace jail::policy
