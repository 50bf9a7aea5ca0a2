#include "runsc/denial_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "log.hpp"
#include "policy/syscalls.hpp"
#include "seccomp/denials.hpp"

namespace jail {
namespace {

// The log line's own words (gVisor's task_syscall.go, doSyscall).
constexpr std::string_view kSource = "task_syscall.go:";
constexpr std::string_view kDenied = ": denied by seccomp";
constexpr std::string_view kKilled = ": killed by seccomp";
// The sentry's line when the container's init has ended (runsc/boot, at info level).
constexpr std::string_view kExiting = "] application exiting with ";

// Longest line tail kept while waiting for its end: a denial line is under 200 bytes, and it is
// what ends its line, so the tail is all that matters.
constexpr std::size_t kKeptTail = 512;

bool skip(std::string_view& text, std::string_view word) {
  if (!text.starts_with(word)) return false;
  text.remove_prefix(word.size());
  return true;
}

void skip_spaces(std::string_view& text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
}

bool number(std::string_view& text, int& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return false;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return true;
}

// The actions the policy could have taken for this call: without its arguments (gVisor does not
// log them) a conditional rule may or may not have matched. Only the refusing ones are listed,
// since the call was refused.
std::vector<policy::Action> refusing_actions(const policy::Policy& policy, int nr) {
  std::vector<policy::Action> actions;
  const auto add = [&](const policy::Action& action) {
    if (action.kind == policy::ActionKind::allow || action.kind == policy::ActionKind::log) return;
    if (std::find(actions.begin(), actions.end(), action) == actions.end())
      actions.push_back(action);
  };
  bool unconditional = false;
  for (const policy::Rule* rule : policy.rules_for(nr)) {
    add(rule->action);
    if (!rule->condition) {
      unconditional = true;
      break;
    }
  }
  if (!unconditional) add(policy.default_action);
  return actions;
}

}  // namespace

std::optional<LoggedDenial> parse_denial_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  LoggedDenial denial;
  if (line.ends_with(kKilled)) {
    denial.killed = true;
    line.remove_suffix(kKilled.size());
  } else if (line.ends_with(kDenied)) {
    line.remove_suffix(kDenied.size());
  } else {
    return std::nullopt;
  }
  // What is left ends "task_syscall.go:240] [   1:   1] Syscall 101".
  const std::size_t source = line.rfind(kSource);
  if (source == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(source + kSource.size());
  int source_line = 0;
  int tgid = 0;
  int tid = 0;
  if (!number(rest, source_line) || !skip(rest, "] [")) return std::nullopt;
  skip_spaces(rest);
  if (!number(rest, tgid) || !skip(rest, ":")) return std::nullopt;
  skip_spaces(rest);
  if (!number(rest, tid) || !skip(rest, "] Syscall ")) return std::nullopt;
  if (!number(rest, denial.number) || !rest.empty() || denial.number < 0 || tgid <= 0)
    return std::nullopt;
  denial.pid = tgid;
  return denial;
}

RunscDenialLog::RunscDenialLog(UniqueFd log_read_end, std::shared_ptr<const policy::Policy> policy)
    : log_(std::move(log_read_end)), policy_(std::move(policy)) {
  partial_.reserve(kKeptTail * 2);
}

bool RunscDenialLog::read_some() {
  // One buffer per call on the stack: the supervisor runs in whichever thread waits.
  std::array<char, 16 * 1024> buffer;
  const ssize_t n = ::read(log_.get(), buffer.data(), buffer.size());
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return errno == EINTR;
  if (n <= 0) {
    if (n < 0)
      jail::log().warn("cannot read runsc's log: {}; later denials are not reported",
                       std::strerror(errno));
    if (!partial_.empty()) on_line(partial_);
    partial_.clear();
    log_.reset();
    return false;
  }
  std::string_view chunk(buffer.data(), static_cast<std::size_t>(n));
  for (std::size_t end = chunk.find('\n'); end != std::string_view::npos; end = chunk.find('\n')) {
    if (partial_.empty()) {
      on_line(chunk.substr(0, end));
    } else {
      partial_.append(chunk.substr(0, end));
      on_line(partial_);
      partial_.clear();
    }
    chunk.remove_prefix(end + 1);
  }
  partial_.append(chunk);
  if (partial_.size() > kKeptTail) partial_.erase(0, partial_.size() - kKeptTail);
  return true;
}

void RunscDenialLog::on_readable() {
  // Up to the pipe's 1 MiB per wake (the supervisor reads it only every few ms), bounded so
  // that a chatty log does not starve the other fds.
  for (int i = 0; i < 64 && log_.valid(); ++i) {
    if (!read_some()) break;
  }
}

void RunscDenialLog::drain() {
  if (!log_.valid()) return;
  // runsc has exited: what it wrote is all in the pipe; read it, then stop.
  while (log_.valid() && read_some()) {
  }
  log_.reset();
}

std::optional<int> parse_tool_exit_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  const std::size_t at = line.find(kExiting);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + kExiting.size());
  int value = 0;
  if (skip(rest, "exit status ") && number(rest, value) && rest.empty() && value >= 0 &&
      value <= 255) {
    return value << 8;  // as W_EXITCODE(value, 0)
  }
  if (skip(rest, "killed by signal ") && number(rest, value) && rest.empty() && value > 0 &&
      value < 65) {
    return value;
  }
  return std::nullopt;
}

void RunscDenialLog::on_line(std::string_view line) {
  // The last such line wins. The tool can get one of its own into the log (a path it made up is
  // logged verbatim), so decide_result believes it only where runsc run's exit agrees.
  if (const std::optional<int> status = parse_tool_exit_line(line)) {
    tool_status_ = status;
    return;
  }
  const std::optional<LoggedDenial> logged = parse_denial_line(line);
  if (!logged) return;
  Violation record;
  record.number = logged->number;
  record.syscall = policy::syscall_name(logged->number);
  record.pid = logged->pid;
  const std::vector<policy::Action> actions =
      policy_ ? refusing_actions(*policy_, logged->number) : std::vector<policy::Action>{};
  std::vector<std::string> names;
  for (const policy::Action& action : actions) names.push_back(policy::to_string(action));
  record.action =
      names.empty() ? std::string("denied") : fmt::format("{}", fmt::join(names, " or "));
  const std::string kind = fmt::format("{} by policy {} → {}", record.syscall,
                                       policy_ ? policy_->name : std::string("?"), record.action);
  const LogFields structured{.event = "denied",
                             .syscall = record.syscall,
                             .pid = static_cast<int>(record.pid),
                             .action = record.action};
  const ScopedLogFields scope(structured);
  if (repeats_.first(kind, {record.syscall, "", record.action})) {
    jail::log().warn("denied {} in sandbox pid {} by policy {} → {} (gVisor reports no arguments)",
                     record.syscall, record.pid, policy_ ? policy_->name : std::string("?"),
                     record.action);
  }
  ++denials_.count;
  if (denials_.first.size() < DenialHandler::kKeptDenials) denials_.first.push_back(record);
  // A call gVisor killed outright, or one every refusing rule of which kills: with "errno EPERM
  // or kill" the tool may rightly have got its errno and gone on.
  const bool every_rule_kills =
      !actions.empty() &&
      std::all_of(actions.begin(), actions.end(), [](const policy::Action& action) {
        return action.kind == policy::ActionKind::kill;
      });
  const bool kill = logged->killed || every_rule_kills;
  if (kill && !kill_denial_) kill_denial_ = record;
}

}  // namespace jail
