#include "learn_command.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "jail/launch.hpp"
#include "learned_policy.hpp"
#include "learned_rules.hpp"
#include "policy/policy.hpp"
#include "run_command.hpp"
#include "run_options.hpp"
#include "session_commands.hpp"

namespace jail::runner {
namespace {

// The exit code for wrong options and for a jail that could not be set up (docs/architecture.md).
constexpr int kUsageExit = 125;

constexpr const char* kUsage =
    "Usage: jail policy learn -o OUT.policy [--base BASE | --merge OLD] [--strict] [OPTIONS] -- "
    "COMMAND [ARGS...]\n"
    "\n"
    "Run COMMAND in a jail (as jail OPTIONS -- COMMAND would) with every syscall allowed and\n"
    "reported to jail's supervisor, then write a policy that narrows BASE to what it used:\n"
    "`within \"BASE\"`, so nothing BASE refuses is allowed and what BASE kills stays killed.\n"
    "What the run used is widened to the families it belongs to (threads, child processes,\n"
    "file locks, terminal queries, directory traversal, ...: docs/policies.md), each named in a\n"
    "comment; other calls are allowed as sampled, with the arguments that matter by name\n"
    "(ioctl requests, socket families, clone flags, prctl options, fcntl commands, madvise\n"
    "advice) and dangerous ones marked REVIEW. Review it before use.\n"
    "OPTIONS are jail's run options (see jail --help), except --policy (the learning run allows\n"
    "every syscall; that is how it sees them) and --runtime runsc (gVisor's kernel answers the\n"
    "syscalls; none reach jail).\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE   write the policy here (required; checked before COMMAND runs)\n"
    "  --base BASE         the most the policy may allow: a shipped name or a policy file\n"
    "                      (default: default)\n"
    "  --merge OLD         widen OLD (a policy file or shipped name) instead: rules for only what\n"
    "                      OLD does not allow yet go in front of it, each one named; OLD's own\n"
    "                      `within` still bounds them\n"
    "  --strict            allow exactly what was sampled: no families\n"
    "  --default ACTION    what the new policy does with a call BASE allows and the run did not\n"
    "                      make: errno EPERM (the default), errno NAME, kill, log or trap\n"
    "  --allow-failed-run  write the policy even when COMMAND failed (exited non-zero, timed\n"
    "                      out or was killed), with a warning at its top\n"
    "  -h, --help          this text\n"
    "\n"
    "The policy is loaded with jail's own policy loader before it is written; it is not\n"
    "written if it does not load, nor when COMMAND failed (unless --allow-failed-run).\n"
    "Exit status: COMMAND's own, as for jail (a failed run: its status, and no policy); 125\n"
    "when the options are wrong, the policy cannot be written, or the run could not be set up.\n";

// The words `policy learn` takes itself; the others are jail's run options.
struct LearnRequest {
  bool help = false;
  bool strict = false;
  bool allow_failed_run = false;
  std::optional<std::string> output;
  std::optional<std::string> base;
  std::optional<std::string> merge;
  std::optional<std::string> default_action;
  std::vector<std::string> run_options;
};

// Throws UsageError.
LearnRequest split_options(const std::vector<std::string>& options) {
  LearnRequest request;
  for (std::size_t i = 0; i < options.size(); ++i) {
    const std::string& word = options[i];
    if (word == "-h" || word == "--help") {
      request.help = true;
      continue;
    }
    if (word == "--strict" || word == "--allow-failed-run") {
      (word == "--strict" ? request.strict : request.allow_failed_run) = true;
      continue;
    }
    // FLAG VALUE, or --FLAG=VALUE as the run options (CLI11) take it too.
    const auto equals = word.starts_with("--") ? word.find('=') : std::string::npos;
    const std::string flag = word.substr(0, equals);
    std::optional<std::string>* value = nullptr;
    if (flag == "-o" || flag == "--output") value = &request.output;
    if (flag == "--merge") value = &request.merge;
    if (flag == "--base") value = &request.base;
    if (flag == "--default") value = &request.default_action;
    if (value == nullptr) {
      request.run_options.push_back(word);
    } else if (value->has_value()) {
      throw UsageError(fmt::format("{} is given twice", flag));
    } else if (equals != std::string::npos) {
      *value = word.substr(equals + 1);
    } else if (i + 1 < options.size()) {
      *value = options[++i];
    } else {
      throw UsageError(fmt::format("{} needs a value", flag));
    }
  }
  return request;
}

// What cannot mean anything to a learning run is refused with the reason, not ignored.
std::optional<std::string> why_not_learnable(const LearnRequest& request, const RunOptions& run) {
  if (!request.output || request.output->empty()) {
    return "-o OUT.policy is required: where the learned policy is written";
  }
  if (request.merge && request.default_action) {
    return "--default is for a new policy; --merge keeps the default of the policy it widens";
  }
  if (request.merge && request.base) {
    return "--base is for a new policy; --merge keeps the bound (`within`) of the policy it "
           "widens";
  }
  const bool policy_flag = std::any_of(
      request.run_options.begin(), request.run_options.end(),
      [](const auto& word) { return word == "--policy" || word.starts_with("--policy="); });
  if (policy_flag || run.spec.policy != Spec{}.policy) {
    return "--policy (on the command line or in a --profile) cannot apply: a learning run "
           "allows every syscall and reports it, which is how it sees what the tool uses; leave "
           "it out (to widen an existing policy, name it with --merge)";
  }
  if (run.spec.runtime == Runtime::runsc) {
    return "--runtime runsc cannot learn: gVisor's own kernel answers the tool's syscalls, so "
           "none reach jail's supervisor; learn with the native runtime";
  }
  if (request.default_action) {
    if (const auto problem = default_action_problem(*request.default_action)) {
      return fmt::format("--default '{}' is not an action: {}", *request.default_action, *problem);
    }
  }
  return std::nullopt;
}

// The file -o names: opened (made if need be) before the tool runs, so a path that cannot be
// written fails before anything ran, and never through a symlink: a tool that can write to that
// directory could put one there, and root would write the policy wherever it pointed.
class PolicyOutput {
 public:
  // Throws UsageError.
  explicit PolicyOutput(std::string path);
  ~PolicyOutput();
  PolicyOutput(const PolicyOutput&) = delete;
  PolicyOutput& operator=(const PolicyOutput&) = delete;

  // Throws std::runtime_error.
  void write(const std::string& text);

 private:
  std::string path_;
  int fd_ = -1;
  bool created_ = false;
  bool written_ = false;
};

PolicyOutput::PolicyOutput(std::string path) : path_(std::move(path)) {
  // O_NONBLOCK: a FIFO at that path fails here instead of waiting for a reader.
  constexpr int kFlags = O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  fd_ = ::open(path_.c_str(), kFlags | O_CREAT | O_EXCL, 0644);
  created_ = fd_ >= 0;
  if (fd_ < 0 && errno == EEXIST) fd_ = ::open(path_.c_str(), kFlags);
  if (fd_ < 0) {
    const int err = errno;
    throw UsageError(fmt::format("cannot write -o {}: {}{}", path_, std::strerror(err),
                                 err == ELOOP
                                     ? " (it is a symlink: jail never writes a policy through one)"
                                 : err == ENOENT ? " (its directory must exist)"
                                                 : ""));
  }
  struct stat info {};
  if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw UsageError(fmt::format("cannot write -o {}: it is not a regular file", path_));
  }
}

PolicyOutput::~PolicyOutput() {
  if (fd_ < 0) return;
  // A file made here and never written would be left as an empty policy that does not load.
  // Removed only while that path is still this file: the tool may have replaced it meanwhile.
  struct stat ours {
  }, there{};
  if (created_ && !written_ && ::fstat(fd_, &ours) == 0 && ::lstat(path_.c_str(), &there) == 0 &&
      ours.st_dev == there.st_dev && ours.st_ino == there.st_ino) {
    ::unlink(path_.c_str());
  }
  ::close(fd_);
}

void PolicyOutput::write(const std::string& text) {
  // Every process of the jail has ended by now; if the path names another file than the one
  // opened before the run, the tool replaced it, and what is there is the tool's, not ours.
  struct stat ours {
  }, there{};
  if (::fstat(fd_, &ours) != 0 || ::lstat(path_.c_str(), &there) != 0 ||
      ours.st_dev != there.st_dev || ours.st_ino != there.st_ino) {
    throw std::runtime_error(fmt::format(
        "{} was replaced or removed while the tool ran (its directory is writable in the jail); "
        "the policy was not written: write it where the tool cannot reach",
        path_));
  }
  if (::ftruncate(fd_, 0) != 0) {
    throw std::runtime_error(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
  }
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n =
        ::pwrite(fd_, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw std::runtime_error(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
  written_ = true;
}

// How the learning run failed, or empty when the tool exited 0.
std::string how_it_failed(const Result& result) {
  switch (result.outcome) {
    case Outcome::exited:
      return result.exit_code == 0 ? "" : fmt::format("the tool exited with {}", result.exit_code);
    case Outcome::signaled:
      return fmt::format("the tool was killed by signal {}", result.signal);
    case Outcome::timeout:
      return "the tool ran out of time";
    case Outcome::oom:
      return "the tool ran out of memory";
    default:
      return fmt::format("the run ended as {}", to_string(result.outcome));
  }
}

// What the written policy means for the calls the run made: each one a merge added, and each
// one it still refuses (its bound refuses it), so no one learns that from the next run's failure.
void report_changes(const std::string& text, const std::string& out, const policy::Policy* old,
                    const std::vector<SyscallUse>& seen) {
  const std::string dir = std::filesystem::path(out).parent_path().string();
  const policy::LoadResult loaded = policy::try_parse_policy(text, out, dir.empty() ? "." : dir);
  if (!loaded.policy) return;
  for (const auto& use : seen) {
    if (old == nullptr || allows_use(*old, use) || !allows_use(*loaded.policy, use)) continue;
    std::fprintf(stderr, "jail: added %s (%s)\n", use.name.c_str(),
                 counted(use.count, "call", "calls").c_str());
  }
  for (const auto& line : refused_by(*loaded.policy, seen)) {
    std::fprintf(stderr, "jail: still refused: %s; its bound (`within`) refuses it\n",
                 line.c_str());
  }
}

}  // namespace

int learn_command(const std::vector<std::string>& options,
                  const std::vector<std::string>& command) {
  // As for `jail`: the message, and a setup_error status where the caller asked for one.
  auto refuse = [&options](std::string message) {
    while (!message.empty() && message.back() == '\n') message.pop_back();
    // On the first line, before the source line and caret of a policy diagnostic.
    message.insert(std::min(message.find('\n'), message.size()), "; nothing was run");
    spdlog::error("policy learn: {}", message);
    write_usage_failure(options, "policy learn: " + message);
    return kUsageExit;
  };
  LearnRequest request;
  RunOptions run;
  try {
    request = split_options(options);
    if (request.help) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    run = parse_run_options(request.run_options, command);
    setup_logging(run.log);
  } catch (const std::exception& error) {
    return refuse(error.what());
  }
  if (const auto problem = why_not_learnable(request, run)) return refuse(*problem);

  const std::string& out = *request.output;
  const std::string out_dir = std::filesystem::absolute(out).parent_path().string();
  std::optional<MergeBase> merge;
  std::optional<LearnBase> base;
  if (request.merge) {
    try {
      merge = load_merge_base(*request.merge, out_dir);
    } catch (const std::exception& error) {
      return refuse(fmt::format("cannot merge into {}: {}", *request.merge, error.what()));
    }
    if (const auto problem = load_problems(merge->text, out)) {
      return refuse(fmt::format("{} would not load as {}:\n{}", *request.merge, out, *problem));
    }
    if (merge->policy.within.empty()) {
      spdlog::warn(
          "policy learn: {} has no `within`, so nothing bounds the rules a merge adds to it; "
          "review each, or give it a bound (`within \"default\"`)",
          *request.merge);
    }
  } else {
    const std::string name = request.base.value_or("default");
    try {
      base = load_learn_base(name, out_dir);
    } catch (const std::exception& error) {
      return refuse(fmt::format("--base {} cannot bound the policy: {}", name, error.what()));
    }
  }
  std::optional<PolicyOutput> output;
  try {
    output.emplace(out);
  } catch (const std::exception& error) {
    return refuse(error.what());
  }
  const std::optional<RunReports> reports = RunReports::open(run);
  if (!reports) return kUsageExit;

  block_forwarded_signals();
  run.spec.seccomp_mode = SeccompMode::learn;
  const Result result = jail::run(run.spec);
  std::string learn_failed;
  log_result(result);
  if (run.spec.trace_timing) print_timings(result);
  if (result.dry_run && !run.log.quiet) print_dry_run_summary(*result.dry_run);
  reports->write(run, result);
  if (result.syscalls_seen.empty()) {
    // A run that could not be set up has said why already; the tool never ran to make a call.
    if (result.outcome != Outcome::setup_error && result.outcome != Outcome::internal_error) {
      spdlog::error("policy learn: the tool made no syscall the supervisor saw; nothing written");
    }
    return exit_code_for(result) == 0 ? kUsageExit : exit_code_for(result);
  }

  if (const std::string failed = how_it_failed(result); !failed.empty()) {
    if (!request.allow_failed_run) {
      spdlog::error(
          "policy learn: the run failed ({}); no policy was written: a failed run may have "
          "stopped before doing what the tool does. Learn from a run that succeeds, or pass "
          "--allow-failed-run to write it anyway",
          failed);
      const int code = exit_code_for(result);
      return code == 0 ? kUsageExit : code;
    }
    learn_failed = failed;
  }

  LearnOptions learn;
  if (request.default_action) learn.default_action = *request.default_action;
  learn.command = command;
  learn.strict = request.strict;
  learn.failed_run = learn_failed;
  const std::string text = merge ? merge_into(*merge, result.syscalls_seen, learn)
                                 : learned_policy_text(result.syscalls_seen, learn, *base);
  // The loader is the judge of what the text means: what it refuses is not written.
  if (const auto problem = load_problems(text, out)) {
    spdlog::error("policy learn: the policy made for {} does not load; it was not written:\n{}",
                  out, *problem);
    return kUsageExit;
  }
  try {
    output->write(text);
  } catch (const std::exception& error) {
    spdlog::error("policy learn: {}", error.what());
    return kUsageExit;
  }
  std::fprintf(stderr, "jail: learned %zu syscalls from %s; wrote %s\n",
               result.syscalls_seen.size(), quoted_command(command).c_str(), out.c_str());
  report_changes(text, out, merge ? &merge->policy : nullptr, result.syscalls_seen);
  if (merge && text == merge->text) {
    std::fprintf(stderr, "jail: %s already allowed everything seen\n", request.merge->c_str());
  }
  return exit_code_for(result);
}

}  // namespace jail::runner
