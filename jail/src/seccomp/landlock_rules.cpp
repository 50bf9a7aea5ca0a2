#include "seccomp/landlock_rules.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cerrno>
#include <string>
#include <vector>

#include "seccomp/reroute.hpp"

namespace jail {
namespace {

constexpr std::uint64_t kLow32 = 0xffffffffULL;
constexpr int kFchmodat2 = 452;  // Linux 6.6; Debian 12's headers predate it

class Refusals {
 public:
  void add(int nr, int err, std::optional<policy::Condition> condition, const std::string& why) {
    rules_.push_back(kernel_refusal(nr, err, std::move(condition), "(Landlock mode) " + why));
  }
  void prepend_to(policy::Policy& policy) {
    policy.rules.insert(policy.rules.begin(), rules_.begin(), rules_.end());
  }

 private:
  std::vector<policy::Rule> rules_;
};

policy::Condition any_of(std::vector<policy::Condition> operands) {
  policy::Condition condition;
  condition.kind = policy::Condition::Kind::any_of;
  condition.operands = std::move(operands);
  return condition;
}

policy::Condition all_of(std::vector<policy::Condition> operands) {
  policy::Condition condition;
  condition.kind = policy::Condition::Kind::all_of;
  condition.operands = std::move(operands);
  return condition;
}

policy::Condition low32_is(int arg, std::uint64_t value) {
  return arg_compare(arg, kLow32, policy::CmpOp::eq, value);
}

policy::Condition low32_is_not(int arg, std::uint64_t value) {
  return arg_compare(arg, kLow32, policy::CmpOp::ne, value);
}

}  // namespace

void add_landlock_gaps(policy::Policy& policy, const LandlockGaps& gaps) {
  Refusals refusals;
  if (gaps.net_none) {
    for (const int family : {AF_INET, AF_INET6, AF_PACKET})
      refusals.add(SYS_socket, EAFNOSUPPORT, low32_is(0, static_cast<std::uint64_t>(family)),
                   "--net none: a socket of the network's families");
  }
  for (const int nr :
       {SYS_chmod, SYS_fchmod, SYS_fchmodat, kFchmodat2, SYS_chown, SYS_fchown, SYS_lchown,
        SYS_fchownat, SYS_utime, SYS_utimes, SYS_utimensat, SYS_futimesat})
    refusals.add(nr, EPERM, std::nullopt, "a file's mode, owner or times");
  // Another process's: only 0, the caller itself (and for setpriority and ioprio_set its own
  // process group); never a whole uid's processes.
  refusals.add(SYS_setpriority, EPERM, any_of({low32_is(0, PRIO_USER), low32_is_not(1, 0)}),
               "the priority of another process or of the user's");
  refusals.add(SYS_ioprio_set, EPERM,
               any_of({low32_is(0, 3 /* IOPRIO_WHO_USER */), low32_is_not(1, 0)}),
               "the I/O priority of another process or of the user's");
  for (const int nr :
       {SYS_sched_setaffinity, SYS_sched_setscheduler, SYS_sched_setparam, SYS_sched_setattr})
    refusals.add(nr, EPERM, low32_is_not(0, 0), "another process's scheduling");
  refusals.add(
      SYS_prlimit64, EPERM,
      all_of({low32_is_not(0, 0), arg_compare(2, ~std::uint64_t{0}, policy::CmpOp::ne, 0)}),
      "another process's resource limits");
  if (gaps.abi < 3) {
    refusals.add(SYS_truncate, EACCES, std::nullopt, "truncate by path (Landlock below ABI 3)");
    // O_RDONLY is 0: the access mode bits clear and O_TRUNC set.
    const auto read_and_truncate = [](int arg) {
      return all_of({arg_compare(arg, O_ACCMODE, policy::CmpOp::eq, O_RDONLY),
                     arg_compare(arg, O_TRUNC, policy::CmpOp::eq, O_TRUNC)});
    };
    refusals.add(SYS_open, EACCES, read_and_truncate(1),
                 "O_TRUNC on an open for reading (Landlock below ABI 3)");
    refusals.add(SYS_openat, EACCES, read_and_truncate(2),
                 "O_TRUNC on an open for reading (Landlock below ABI 3)");
  }
  refusals.prepend_to(policy);
}

}  // namespace jail
