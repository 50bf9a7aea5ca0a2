#include "policy/syscalls.hpp"

#include <seccomp.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

namespace jail::policy {
namespace {

// x86_64's numbers end below 512 (x32's start there, another architecture to libseccomp); each
// number past the last one costs libseccomp a whole scan of its table, so the bound is tight:
// the table is built at every jail start.
constexpr int kMaxSyscall = 512;

// Calls newer than the libseccomp on Debian 12 (2.5.4 stops at futex_requeue, 456). Numbers
// from the kernel's arch/x86/entry/syscalls/syscall_64.tbl.
struct Extra {
  const char* name;
  int nr;
};
constexpr Extra kNewerSyscalls[] = {
    {"uretprobe", 335},
    {"statmount", 457},
    {"listmount", 458},
    {"lsm_get_self_attr", 459},
    {"lsm_set_self_attr", 460},
    {"lsm_list_modules", 461},
    {"mseal", 462},
    {"setxattrat", 463},
    {"getxattrat", 464},
    {"listxattrat", 465},
    {"removexattrat", 466},
    {"open_tree_attr", 467},
    {"file_getattr", 468},
    {"file_setattr", 469},
};

struct Table {
  std::map<std::string, int, std::less<>> by_name;
  std::map<int, std::string> by_number;
  std::vector<std::string> names;
};

const Table& table() {
  static const Table t = [] {
    Table out;
    for (int nr = 0; nr < kMaxSyscall; ++nr) {
      std::unique_ptr<char, decltype(&std::free)> name(
          seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr), &std::free);
      if (!name) continue;
      out.by_name.emplace(name.get(), nr);
      out.by_number.emplace(nr, name.get());
    }
    for (const Extra& e : kNewerSyscalls) {
      if (out.by_number.count(e.nr) != 0) continue;
      out.by_name.emplace(e.name, e.nr);
      out.by_number.emplace(e.nr, e.name);
    }
    for (const auto& [name, nr] : out.by_name) out.names.push_back(name);
    return out;
  }();
  return t;
}

// Arguments the kernel declares as int/unsigned int (SYSCALL_DEFINE… in the kernel sources):
// (clone too: it keeps lower_32_bits of its flags) the syscall wrapper truncates the 64-bit
// register, so a filter comparing all 64 bits would let `ioctl(fd, TIOCSTI | 1ul << 32)` past an
// `arg1 == TIOCSTI` deny rule. Bit i = arg i.
struct Narrow {
  const char* name;
  unsigned args;
};
constexpr Narrow kNarrowArgs[] = {
    {"clone", 0b1},
    {"ioctl", 0b11},
    {"socket", 0b111},
    {"socketpair", 0b111},
    {"personality", 0b1},
    {"prctl", 0b1},
    {"fcntl", 0b11},
    {"setsockopt", 0b10111},
    {"getsockopt", 0b111},
    {"seccomp", 0b11},
    {"kill", 0b11},
    {"tgkill", 0b111},
    {"tkill", 0b11},
    {"madvise", 0b100},
    {"futex", 0b110},
    {"open", 0b110},
    {"openat", 0b1101},
    {"setns", 0b11},
    {"dup3", 0b111},
    {"bind", 0b101},
    {"connect", 0b101},
    {"accept4", 0b1001},
    {"sendmsg", 0b101},
    {"recvmsg", 0b101},
    {"setuid", 0b1},
    {"setgid", 0b1},
    {"setreuid", 0b11},
    {"setregid", 0b11},
    {"setresuid", 0b111},
    {"setresgid", 0b111},
    {"keyctl", 0b1},
    {"perf_event_open", 0b1110},
    {"bpf", 0b1},
    {"memfd_create", 0b10},
    {"pidfd_open", 0b11},
    {"faccessat", 0b101},
    {"rt_sigaction", 0b1},
    {"rt_sigprocmask", 0b1},
    {"wait4", 0b101},
    {"getrandom", 0b100},
    {"flock", 0b11},
    {"lseek", 0b101},
    {"setpriority", 0b111},
    {"getpriority", 0b11},
    {"io_uring_setup", 0b1},
    {"userfaultfd", 0b1},
    {"syslog", 0b1},
    {"reboot", 0b111},
    {"open_by_handle_at", 0b101},
    {"timerfd_create", 0b11},
    {"eventfd2", 0b11},
    {"epoll_create1", 0b1},
    {"inotify_init1", 0b1},
    {"pipe2", 0b10},
    {"fsconfig", 0b11},
    {"fsopen", 0b10},
    {"fsmount", 0b111},
    {"mount_setattr", 0b101},
    {"open_tree", 0b101},
    {"move_mount", 0b10101},
    {"fspick", 0b101},
    {"kcmp", 0b111},
    {"close", 0b1},
    {"dup2", 0b11},
    {"sched_setscheduler", 0b11},
    {"clock_gettime", 0b1},
    {"clock_nanosleep", 0b11},
};

}  // namespace

bool known_on_some_architecture(std::string_view name) {
  // Calls not on the native architecture resolve to libseccomp's negative pseudo numbers.
  return syscall_number(name).has_value() ||
         seccomp_syscall_resolve_name(std::string(name).c_str()) != __NR_SCMP_ERROR;
}

std::optional<int> syscall_number(std::string_view name) {
  const auto& t = table();
  auto it = t.by_name.find(name);
  if (it == t.by_name.end()) return std::nullopt;
  return it->second;
}

std::string syscall_name(int nr) {
  const auto& t = table();
  auto it = t.by_number.find(nr);
  if (it == t.by_number.end()) return "syscall_" + std::to_string(nr);
  return it->second;
}

const std::vector<std::string>& all_syscall_names() {
  return table().names;
}

bool is_32bit_argument(int nr, int arg) {
  static const std::map<int, unsigned> narrow = [] {
    std::map<int, unsigned> out;
    for (const Narrow& n : kNarrowArgs) {
      if (auto number = syscall_number(n.name)) out[*number] = n.args;
    }
    return out;
  }();
  auto it = narrow.find(nr);
  return it != narrow.end() && arg >= 0 && arg < 6 && ((it->second >> arg) & 1U) != 0;
}

}  // namespace jail::policy
