// Parent side: answers the tool's seccomp user notifications. Every syscall the policy does not
// simply allow arrives here; the policy's own evaluator decides, the decision is recorded (name,
// number, arguments, pid, the rule), and the tool gets its errno — or the jail is ended.
#pragma once

#include <linux/seccomp.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jail/result.hpp"
#include "policy/policy.hpp"
#include "repeat_filter.hpp"
#include "seccomp/connect_broker.hpp"
#include "seccomp/lookup_recorder.hpp"
#include "unique_fd.hpp"

namespace jail {

class DenialHandler {
 public:
  static constexpr std::size_t kKeptDenials = 16;

  // With `learn`, every call that reaches the supervisor is recorded in seen(). With a
  // `lookups` recorder, the filter also routes the path lookups `policy` allows here (see
  // lookup_policy.hpp): their paths are recorded in lookups() and they run unchanged.
  DenialHandler(UniqueFd listener, std::shared_ptr<const policy::Policy> policy, bool learn = false,
                std::unique_ptr<LookupRecorder> lookups = nullptr);

  [[nodiscard]] int fd() const { return listener_.get(); }
  // Under an open-files limit the filter sends exit_group here (seccomp/exit_watch.hpp): each
  // exiting process's descriptors are counted before it lets go of them.
  void watch_exits(std::uint64_t open_files_limit) { open_files_limit_ = open_files_limit; }
  // With the current directory `cwd` bound read-only, the filter sends write-intent calls here
  // (seccomp/write_watch.hpp): the first that lands there is noted, for one hint at the end.
  void watch_writes(std::string cwd) { read_only_cwd_ = std::move(cwd); }
  // The Landlock mode below ABI 6: the routed signal calls (signal_check.hpp) run only when
  // they stay among the descendants of `init`.
  void check_signals(pid_t init) { signals_init_ = init; }
  // The filter sends every connect the policy allows here (seccomp/connect_broker.hpp): the
  // broker performs it, or refuses it as a denial. `own_mounts`: the mount ids of the jail's
  // writable tmpfs mounts and layers; `init` the jail's init (a host pid). Throws jail::Error
  // when the listener cannot be shared with the broker.
  void broker_connects(SocketAccess access, std::vector<std::uint64_t> own_mounts, pid_t init);
  // A process of the jail ended holding every descriptor the limit allows.
  [[nodiscard]] bool open_files_full() const { return open_files_full_; }
  // Once the jail has ended: the broker's workers end, and what they refused is recorded.
  void finish_broker();
  // Every process under the filter is gone (the listener hung up): nothing more can come, and
  // polling it further would return at once, forever. What was recorded stays.
  void close_listener() { listener_.reset(); }

  // Handles one notification. Returns true when the policy said kill: the caller must end the
  // jail before anything else (the denied call stays blocked until it is answered).
  [[nodiscard]] bool handle_one(int init_pidfd);

  // Each kind of denial (syscall, rule, answer) is logged the first time; this logs how many
  // more of each came, and what learning left out. Once, when the run has ended.
  void log_summary() const;

  // Learning keeps at most this many numbers that no syscall table knows.
  static constexpr std::size_t kKeptUnknownNumbers = 64;

  [[nodiscard]] const Denials& denials() const { return denials_; }
  [[nodiscard]] const std::optional<Violation>& violation() const { return violation_; }
  [[nodiscard]] std::vector<SyscallUse> seen() const;
  [[nodiscard]] std::optional<Lookups> lookups() const;

 private:
  UniqueFd listener_;
  std::shared_ptr<const policy::Policy> policy_;
  Denials denials_;
  RepeatFilter denied_;
  RepeatFilter logged_;
  std::optional<Violation> violation_;
  bool learn_ = false;
  std::map<int, SyscallUse> seen_;
  std::size_t unknown_numbers_ = 0;  // distinct ones seen, kept or not
  // Learning: the record of `nr`, made on its first call; nullptr past kKeptUnknownNumbers.
  [[nodiscard]] SyscallUse* use_of(int nr);
  // Learning: keeps the value of the argument a learned rule conditions on (learn_conditions.hpp).
  static void note_condition_value(SyscallUse& use, const seccomp_data& data);
  std::unique_ptr<LookupRecorder> lookups_;
  std::optional<std::uint64_t> open_files_limit_;
  std::optional<std::string> read_only_cwd_;
  std::optional<std::string> write_refused_;  // the first path written in read_only_cwd_
  bool open_files_full_ = false;
  // An exit_group on its way (the caller waits for the answer): notes a full descriptor table.
  void note_exit(const seccomp_notif& request);
  std::unique_ptr<ConnectBroker> connects_;
  pid_t signals_init_ = 0;
  // A connect the policy allows, handed to the broker; a refusal is recorded as a denial.
  void broker_connect(const seccomp_notif& request);
  void record_refusal(const SocketRefusal& refusal);
  void record_signal_refusal(const seccomp_notif& request);
  // Records what the broker's workers refused since the last time.
  void drain_broker();
  // Logs `text` the first time its kind comes through `filter` (denied_ or logged_), with the
  // record's structured fields.
  void log_first(RepeatFilter& filter, const char* event, const Violation& record,
                 const std::string& kind, const std::string& text);
  // Records a denial (the report's count and first few) and logs its kind once.
  void record_denial(const Violation& record, const std::string& kind, const std::string& text,
                     bool fatal);
};

}  // namespace jail
