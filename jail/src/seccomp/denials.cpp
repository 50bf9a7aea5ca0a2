#include "seccomp/denials.hpp"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "log.hpp"

#include "jail/error.hpp"

#include "policy/describe.hpp"
#include "policy/evaluate.hpp"
#include "policy/learn_conditions.hpp"
#include "policy/syscalls.hpp"
#include "seccomp/exit_watch.hpp"
#include "seccomp/signal_check.hpp"
#include "seccomp/write_watch.hpp"

namespace jail {
namespace {

// The pid as the jail sees it (the last NSpid entry), so the report matches what the tool and
// its own logs say; the host pid when it cannot be read (the task is already gone).
pid_t pid_inside(pid_t host_pid) {
  std::ifstream status("/proc/" + std::to_string(host_pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (!line.starts_with("NSpid:")) continue;
    std::istringstream fields(line.substr(6));
    pid_t pid = host_pid;
    for (pid_t value; fields >> value;) pid = value;
    return pid;
  }
  return host_pid;
}

pid_t thread_group_of(pid_t tid) {
  std::ifstream status("/proc/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("Tgid:")) return static_cast<pid_t>(std::stol(line.substr(5)));
  }
  return tid;
}

void send_sigsys(const seccomp_notif& request) {
  siginfo_t info{};
  info.si_signo = SIGSYS;
  info.si_code = SI_QUEUE;
  info.si_call_addr = reinterpret_cast<void*>(request.data.instruction_pointer);
  info.si_syscall = request.data.nr;
  info.si_arch = request.data.arch;
  const auto tid = static_cast<pid_t>(request.pid);
  ::syscall(SYS_rt_tgsigqueueinfo, thread_group_of(tid), tid, SIGSYS, &info);
}

// linux/seccomp.h of Linux 6.6, which the build host's headers may predate.
constexpr unsigned long kNotifSetFlags = SECCOMP_IOW(4, __u64);
constexpr unsigned long kSyncWakeUp = 1UL << 0;  // SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP

}  // namespace

DenialHandler::DenialHandler(UniqueFd listener, std::shared_ptr<const policy::Policy> policy,
                             bool learn, std::unique_ptr<LookupRecorder> lookups)
    : listener_(std::move(listener)),
      policy_(std::move(policy)),
      learn_(learn),
      lookups_(std::move(lookups)) {
  // Each notification is a round trip: the tool's thread blocks, this thread wakes, answers, and
  // wakes it again. By default each wake-up lands on the other CPU, an idle one when the host is
  // quiet, and waking an idle CPU costs far more than the answer (in a Firecracker VM learn mode
  // paid ~40 µs per call, ~10 µs with both on one CPU). With this flag (Linux 6.6) the kernel
  // wakes the waiter on the waker's CPU and the two switch there. Older kernels refuse it
  // (EINVAL): the answers are the same, only slower.
  if (::ioctl(listener_.get(), kNotifSetFlags, kSyncWakeUp) != 0) {
    jail::log().debug("seccomp listener: no synchronous wake-up ({})", std::strerror(errno));
  }
}

std::optional<Lookups> DenialHandler::lookups() const {
  if (!lookups_) return std::nullopt;
  return lookups_->lookups();
}

void DenialHandler::note_condition_value(SyscallUse& use, const seccomp_data& data) {
  const std::optional<int> argument = policy::learned_condition_argument(use.name);
  if (!argument) return;
  std::uint64_t value = data.args[*argument];
  if (policy::is_32bit_argument(data.nr, *argument)) value &= 0xffffffffU;
  auto& values = use.condition_values;
  if (std::find(values.begin(), values.end(), value) != values.end()) return;
  if (values.size() < policy::kKeptConditionValues) {
    values.push_back(value);
  } else {
    use.more_condition_values = true;
  }
}

SyscallUse* DenialHandler::use_of(int nr) {
  if (const auto kept = seen_.find(nr); kept != seen_.end()) return &kept->second;
  // Numbers no table knows are kept up to a limit: a tool that sprays syscall(N) for every N
  // would otherwise grow this map without end (1.7 GB seen).
  std::string name = policy::syscall_name(nr);
  if (name.starts_with("syscall_") && ++unknown_numbers_ > kKeptUnknownNumbers) return nullptr;
  SyscallUse& use = seen_[nr];
  use.name = std::move(name);
  use.number = nr;
  return &use;
}

void DenialHandler::note_exit(const seccomp_notif& request) {
  if (open_files_full_) return;
  const auto held = descriptors_at_limit(static_cast<pid_t>(request.pid), *open_files_limit_);
  // Still waiting for the answer, so the pid was the caller's while its table was read.
  std::uint64_t id = request.id;
  if (!held || ::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0) return;
  open_files_full_ = true;
  jail::log().warn(
      "pid {} ended holding {} open files, all its limit allows: its opens past that failed "
      "with EMFILE (--max-open-files raises the limit)",
      pid_inside(static_cast<pid_t>(request.pid)), *held);
}

void DenialHandler::log_summary() const {
  if (write_refused_) {
    jail::log().warn(
        "the tool tried to write {} in the current directory {}, which is bound read-only (EROFS): "
        "--bind . makes it writable (--dry-run first shows what it would write)",
        *write_refused_, *read_only_cwd_);
  }
  logged_.log_repeats("allowed and logged", "allowed_and_logged");
  denied_.log_repeats("denied", "denied");
  if (unknown_numbers_ > kKeptUnknownNumbers) {
    jail::log().warn("the tool called {} syscall numbers no table knows; the first {} are kept",
                     unknown_numbers_, kKeptUnknownNumbers);
  }
}

std::vector<SyscallUse> DenialHandler::seen() const {
  std::vector<SyscallUse> list;
  for (const auto& [number, use] : seen_) list.push_back(use);
  return list;
}

void DenialHandler::broker_connects(SocketAccess access, std::vector<std::uint64_t> own_mounts,
                                    pid_t init) {
  UniqueFd listener(::fcntl(listener_.get(), F_DUPFD_CLOEXEC, 3));
  if (!listener.valid()) {
    throw Error("supervise", errno,
                fmt::format("cannot share the seccomp listener with the socket broker: {}",
                            std::strerror(errno)));
  }
  connects_ = std::make_unique<ConnectBroker>(std::move(listener), std::move(access),
                                              std::move(own_mounts), init);
}

void DenialHandler::log_first(RepeatFilter& filter, const char* event, const Violation& record,
                              const std::string& kind, const std::string& text) {
  const RepeatFilter::Kind fields{record.syscall, record.rule, record.action};
  const LogFields structured{.event = event,
                             .syscall = record.syscall,
                             .args = &record.args,
                             .pid = static_cast<int>(record.pid),
                             .rule = record.rule,
                             .action = record.action};
  const ScopedLogFields scope(structured);
  if (!filter.first(kind, fields)) return;
  if (&filter == &denied_) {
    jail::log().warn("denied {}", text);
  } else {
    jail::log().info("allowed and logged {}", text);
  }
}

void DenialHandler::record_denial(const Violation& record, const std::string& kind,
                                  const std::string& text, bool fatal) {
  log_first(denied_, "denied", record, kind, text);
  ++denials_.count;
  if (denials_.first.size() < kKeptDenials) denials_.first.push_back(record);
  if (fatal && !violation_) violation_ = record;
}

void DenialHandler::broker_connect(const seccomp_notif& request) {
  if (const std::optional<SocketRefusal> refusal = connects_->take(request))
    record_refusal(*refusal);
}

void DenialHandler::record_signal_refusal(const seccomp_notif& request) {
  Violation record;
  record.syscall = policy::call_name(request.data);
  record.number = static_cast<int>(request.data.nr);
  for (std::size_t i = 0; i < record.args.size(); ++i) record.args[i] = request.data.args[i];
  record.pid = pid_inside(static_cast<pid_t>(request.pid));
  record.action = "errno EPERM";
  const auto target = static_cast<int>(request.data.args[0]);
  record.target = fmt::format("pid {}", target);
  std::string why = "a process outside the jail";
  if (record.number == SYS_pidfd_send_signal) {
    // Its first argument is a descriptor, which the supervisor takes to see which process it
    // names; where an outer profile refuses that, every such signal is refused, and says so.
    record.target = fmt::format("descriptor {}", target);
    if (const int err = descriptors_untakeable()) {
      why = fmt::format(
          "a process the supervisor cannot tell (it may not take the tool's descriptor: "
          "pidfd_getfd {}; an outer seccomp profile, as Docker's without CAP_SYS_PTRACE)",
          strerrorname_np(err));
    }
  }
  record_denial(record, record.syscall + " outside the jail",
                fmt::format("{} of {} in pid {}: {} → errno EPERM", record.syscall, record.target,
                            record.pid, why),
                false);
}

void DenialHandler::record_refusal(const SocketRefusal& refusal) {
  Violation record;
  record.syscall = "connect";
  record.number = SYS_connect;
  record.args = refusal.args;
  record.pid = pid_inside(refusal.pid);
  record.action = fmt::format("errno {}", strerrorname_np(refusal.error));
  record.target = refusal.target;
  // "connect to /home/u/.tmux.sock in pid 7: a socket file outside … → errno EACCES", once
  // for each socket.
  record_denial(record, "connect to " + record.target,
                fmt::format("connect to {} in pid {}: {} → {}", record.target, record.pid,
                            refusal.why, record.action),
                false);
}

void DenialHandler::drain_broker() {
  if (!connects_) return;
  for (const SocketRefusal& refusal : connects_->take_refusals()) record_refusal(refusal);
}

void DenialHandler::finish_broker() {
  if (!connects_) return;
  auto broker = std::move(connects_);
  const std::vector<SocketRefusal> late = broker->take_refusals();
  broker.reset();  // its workers end (a connect in flight is shut down)
  for (const SocketRefusal& refusal : late) record_refusal(refusal);
}

bool DenialHandler::handle_one(int init_pidfd) {
  drain_broker();
  seccomp_notif request{};
  if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_RECV, &request) != 0) {
    // ENOENT: the caller died while waiting (its jail is ending); nothing to answer.
    if (errno != EINTR && errno != ENOENT) {
      jail::log().error("cannot read a seccomp notification: {}", std::strerror(errno));
    }
    return false;
  }
  // Another ABI's numbers mean other calls (i386's 5 is open, x86_64's is fstat): not traced,
  // and evaluate() kills them below.
  const bool native = request.data.arch == AUDIT_ARCH_X86_64 && (request.data.nr & 0x40000000) == 0;
  if (lookups_ && native && LookupRecorder::traces(request.data.nr)) {
    lookups_->record(request, listener_.get());
  }
  const policy::Decision decision = policy::evaluate(*policy_, request.data);
  if (decision.action.kind == policy::ActionKind::allow) {
    // Only a traced lookup or a watched exit gets here allowed (the filter decides every other
    // allow itself): noted, it runs as the policy says, without a log line or a denial.
    if (open_files_limit_ && native && request.data.nr == SYS_exit_group) note_exit(request);
    if (read_only_cwd_ && native && !write_refused_)
      write_refused_ = write_in_read_only(request, *read_only_cwd_);
    if (connects_ && native && request.data.nr == SYS_connect) {
      broker_connect(request);
      return false;
    }
    seccomp_notif_resp response{};
    response.id = request.id;
    response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    if (signals_init_ != 0 && native && is_checked_signal_call(request.data.nr) &&
        !signal_stays_inside(request.data, static_cast<pid_t>(request.pid), signals_init_)) {
      response.flags = 0;
      response.error = -EPERM;  // what Landlock's signal scope answers
      record_signal_refusal(request);
    }
    if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SEND, &response) != 0 && errno != ENOENT) {
      jail::log().error("cannot answer a seccomp notification for {}: {}",
                        policy::syscall_name(request.data.nr), std::strerror(errno));
    }
    return false;
  }
  // The baseline's fixed answers (clone3 → ENOSYS, namespaces, TIOCSTI) are not the tool's
  // needs: a learned policy could not widen them anyway.
  if (learn_ && !decision.by_baseline) {
    // Learning answers at once and keeps only counts and a few distinct argument sets, so a
    // syscall-heavy tool costs a round trip per call but never unbounded memory.
    constexpr std::size_t kKeptArgumentSets = 64;
    if (SyscallUse* use = use_of(request.data.nr)) {
      ++use->count;
      std::array<std::uint64_t, 6> args{};
      for (std::size_t i = 0; i < args.size(); ++i) args[i] = request.data.args[i];
      if (use->distinct_args.size() < kKeptArgumentSets &&
          std::find(use->distinct_args.begin(), use->distinct_args.end(), args) ==
              use->distinct_args.end()) {
        use->distinct_args.push_back(args);
      }
      note_condition_value(*use, request.data);
    }
    if (decision.action.kind == policy::ActionKind::log) {
      if (connects_ && native && request.data.nr == SYS_connect) {
        broker_connect(request);
        return false;
      }
      seccomp_notif_resp response{};
      response.id = request.id;
      response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
      ::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SEND, &response);
      return false;
    }
  }
  Violation record;
  record.syscall = policy::call_name(request.data);
  record.number = request.data.nr;
  for (std::size_t i = 0; i < record.args.size(); ++i) record.args[i] = request.data.args[i];
  record.pid = pid_inside(static_cast<pid_t>(request.pid));
  record.action = policy::to_string(decision.action);
  if (decision.where.line > 0)
    record.rule = fmt::format("{}:{}", decision.where.file, decision.where.line);

  seccomp_notif_resp response{};
  response.id = request.id;
  bool fatal = false;
  switch (decision.action.kind) {
    case policy::ActionKind::allow:
    case policy::ActionKind::log:
      response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
      break;
    case policy::ActionKind::errno_code:
      response.error = -static_cast<int>(decision.action.errno_value);
      break;
    case policy::ActionKind::kill:
      // End the whole jail and leave the call unanswered: the thread stays blocked in the kernel
      // until the namespace teardown kills it, so the denied call never returns into the tool
      // (an answer, even an error, would let it run on until the teardown reaches it).
      fatal = true;
      ::syscall(SYS_pidfd_send_signal, init_pidfd, SIGKILL, nullptr, 0);
      break;
    case policy::ActionKind::trap:
      // SIGSYS to the calling thread, then the call fails with ENOSYS without running: what
      // SECCOMP_RET_TRAP does, seen from the tool — its handler finds the call in si_syscall,
      // si_arch and si_call_addr (only si_code differs: SI_QUEUE, as the kernel requires for a
      // signal queued by another process).
      send_sigsys(request);
      response.error = -ENOSYS;
      break;
  }
  // "ptrace(PTRACE_ATTACH, 1) in pid 7 by policy python.policy:12 → killed", logged the first
  // time its kind comes: "ptrace by policy python.policy:12 → killed".
  std::string text = policy::describe_decision(request.data, decision);
  const auto by = text.find(" by policy ");
  const std::string kind =
      record.syscall + (by != std::string::npos ? text.substr(by) : " → " + record.action);
  if (by != std::string::npos) text.insert(by, fmt::format(" in pid {}", record.pid));
  if (decision.action.kind == policy::ActionKind::log) {
    log_first(logged_, "allowed_and_logged", record, kind, text);
    if (connects_ && native && request.data.nr == SYS_connect) {
      broker_connect(request);
      return false;
    }
  } else {
    record_denial(record, kind, text, fatal);
  }
  if (fatal) return true;
  if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SEND, &response) != 0 && errno != ENOENT) {
    jail::log().error("cannot answer a seccomp notification for {}: {}", record.syscall,
                      std::strerror(errno));
  }
  return fatal;
}

}  // namespace jail
