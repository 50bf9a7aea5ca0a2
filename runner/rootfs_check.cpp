#include "rootfs_check.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "jail/byte_text.hpp"
#include "jail/launch.hpp"
#include "rootfs/check.hpp"
#include "run_command.hpp"
#include "run_options.hpp"

namespace jail::runner {
namespace {

constexpr int kNothingMissing = 0;
constexpr int kSomethingMissing = 1;
constexpr int kBadInput = 2;

constexpr const char* kUsage =
    "Usage: jail rootfs check OUT [--all] [OPTIONS] -- COMMAND [ARGS...]\n"
    "\n"
    "Run COMMAND in the root OUT (as jail --rootfs OUT would) with every path it looks up\n"
    "(open, stat, access, readlink, exec; and the interpreter or ELF loader of each file it\n"
    "runs, which the kernel looks up itself) recorded, then report the paths OUT lacks:\n"
    "those the host has (what the recipe probably forgot, with the recipe line that adds\n"
    "each) and, with --all, those absent on the host too (ordinary probing).\n"
    "OPTIONS are jail's run options (see jail --help), except --rootfs.\n"
    "\n"
    "Options:\n"
    "  --all        also list the paths absent on the host too\n"
    "  -h, --help   this text\n"
    "\n"
    "Exit status: 0 nothing missing that the host has; 1 something missing; 2 bad input or\n"
    "a run that could not be set up.\n";

std::string describe_outcome(const Result& result) {
  switch (result.outcome) {
    case Outcome::exited:
      return fmt::format("exited with {}", result.exit_code);
    case Outcome::signaled:
      return fmt::format("was killed by signal {} ({})", result.signal,
                         sigabbrev_np(result.signal));
    default:
      return fmt::format("ended: {}", to_string(result.outcome));
  }
}

// The command as one line a reader can paste back: words with spaces or quotes single-quoted.
std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) {
    if (!text.empty()) text += ' ';
    if (!word.empty() && word.find_first_of(" \t'\"$;|&()<>*?") == std::string::npos) {
      text += word;
      continue;
    }
    text += '\'';
    for (const char c : word) text += c == '\'' ? std::string("'\\''") : std::string(1, c);
    text += '\'';
  }
  return text;
}

// Where jail's start looked for the command (see jail/src/child/exec.cpp).
std::vector<std::string> start_candidates(const Spec& spec) {
  const std::string& name = spec.argv.front();
  if (name.find('/') != std::string::npos) {
    return {name.front() == '/' ? name : spec.cwd + "/" + name};
  }
  const std::string path = jail::environment_value(spec.env, "PATH").value_or("/usr/bin:/bin");
  std::vector<std::string> candidates;
  std::size_t start = 0;
  while (true) {
    const auto end = path.find(':', start);
    std::string dir =
        path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (dir.empty() || dir.front() != '/') dir = spec.cwd + "/" + dir;
    candidates.push_back(std::filesystem::path(dir + "/" + name).lexically_normal().string());
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return candidates;
}

std::size_t lookups_in(const std::vector<rootfs::MissingFile>& files) {
  std::size_t count = 0;
  for (const auto& file : files) count += file.looked_up_as.size() + file.nested;
  return count;
}

// Every path printed is the tool's text (a name it looked up) or leads to it: shown through
// jail::printable, so that a terminal escape sequence in a name is seen, not obeyed.
std::string shown(const std::string& path) {
  return jail::printable(path);
}

std::string names_of(const rootfs::MissingFile& file) {
  std::vector<std::string> names;
  for (const auto& name : file.looked_up_as) {
    names.push_back(shown(name.syscall) +
                    (name.final_link == rootfs::FinalLink::not_followed ? " nofollow " : " ") +
                    shown(name.path));
  }
  std::string text = fmt::format("({})", fmt::join(names, ", "));
  if (file.nested > 0) text += fmt::format(" and {} more missing paths below it", file.nested);
  return text;
}

// Paths go through shown(); recipe lines as rootfs::to_toml writes them, which is safe to print
// (a control character in a path is a TOML escape there).
void print_report(const rootfs::CheckReport& report, const Lookups& lookups, std::size_t looked_up,
                  const std::string& out_path, bool all) {
  const std::string out = shown(out_path);
  const std::size_t on_host =
      lookups_in(report.missing) + lookups_in(report.optional) + lookups_in(report.root_only);
  std::printf(
      "it looked up %zu paths in the root: %zu there, %zu not (%zu of them on the host); and %llu "
      "times under the jail's own mounts (/proc, /dev, /tmp, binds)\n",
      looked_up - report.provided, report.present, on_host + report.probing.size(), on_host,
      static_cast<unsigned long long>(lookups.under_jail_mounts + report.provided));
  if (report.missing.empty()) {
    std::printf("nothing it needs is missing from %s (nothing the host has)\n", out.c_str());
  } else {
    std::printf("missing from %s, present on the host (the recipe probably forgot these):\n",
                out.c_str());
    for (const auto& file : report.missing) {
      std::printf("  %s  %s\n      add: %s\n", shown(file.host_path).c_str(),
                  names_of(file).c_str(), rootfs::to_toml(file.recipe).c_str());
    }
    if (report.missing.size() > 1) {
      // Several `add:` lines may share a key, which a TOML file takes only once.
      std::printf("all of them as recipe lines:\n");
      for (const auto& entry : rootfs::merged_recipe(report.missing))
        std::printf("  %s\n", rootfs::to_toml(entry).c_str());
    }
  }
  if (!report.optional.empty()) {
    std::printf("missing from %s but optional (not counted):\n", out.c_str());
  }
  for (const auto& file : report.optional) {
    std::printf("  %s  %s: without it %s\n", shown(file.host_path).c_str(), names_of(file).c_str(),
                file.optional_because.c_str());
  }
  if (!report.root_only.empty()) {
    std::printf(
        "left out %zu paths it looked for that are on the host but only root can read there (not "
        "readable by others, or in a directory others cannot search): never suggested for a "
        "root, not counted\n",
        report.root_only.size());
  }
  if (all) {
    if (!report.probing.empty()) std::printf("absent on the host too (ordinary probing):\n");
    for (const auto& lookup : report.probing)
      std::printf("  %s  (%s)\n", shown(lookup.path).c_str(), shown(lookup.syscall).c_str());
  } else if (!report.probing.empty()) {
    std::printf(
        "%zu more paths it looked for are absent on the host too (ordinary probing; --all lists "
        "them)\n",
        report.probing.size());
  }
  if (lookups.beyond_limit > 0 || lookups.unreadable > 0) {
    std::printf(
        "not checked: %llu lookups past the limit of recorded paths, %llu whose path could not be "
        "read\n",
        static_cast<unsigned long long>(lookups.beyond_limit),
        static_cast<unsigned long long>(lookups.unreadable));
  }
}

}  // namespace

int rootfs_check_command(int argc, char** argv) {
  std::vector<std::string> options, command;
  bool after_separator = false, all = false, help = false;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (after_separator) {
      command.push_back(word);
    } else if (word == "--") {
      after_separator = true;
    } else if (word == "--all") {
      all = true;
    } else if (word == "-h" || word == "--help") {
      help = true;
    } else {
      options.push_back(word);
    }
  }
  if (help) {
    std::fputs(kUsage, stdout);
    return kNothingMissing;
  }
  if (options.empty() || options.front().starts_with("-")) {
    spdlog::error(
        "rootfs check: OUT comes first: jail rootfs check OUT [--all] [OPTIONS] -- COMMAND "
        "[ARGS...]");
    return kBadInput;
  }
  const std::string out = std::filesystem::absolute(options.front()).lexically_normal().string();
  options.erase(options.begin());
  if (!after_separator || command.empty()) {
    spdlog::error(
        "rootfs check: missing '--' and the command: jail rootfs check {} [OPTIONS] -- COMMAND "
        "[ARGS...]",
        shown(out));
    return kBadInput;
  }
  if (const auto problem = rootfs::why_not_a_root(out)) {
    spdlog::error("rootfs check: {}", shown(*problem));
    return kBadInput;
  }
  for (const auto& word : options) {
    if (word == "--rootfs" || word.starts_with("--rootfs=")) {
      spdlog::error("rootfs check: OUT is the root; leave --rootfs out");
      return kBadInput;
    }
  }
  // As a flag, so the run is exactly what `jail --rootfs OUT` makes (no binding of the current
  // directory, which a prepared root may not have).
  options.insert(options.begin(), {"--rootfs", out});
  RunOptions run;
  try {
    run = parse_run_options(options, command);
    setup_logging(run.log);
  } catch (const HelpRequested&) {
    std::fputs(kUsage, stdout);
    return kNothingMissing;
  } catch (const std::exception& error) {
    spdlog::error("rootfs check: {}", error.what());
    return kBadInput;
  }
  run.spec.lookups = LookupTrace::record;

  const std::optional<RunReports> reports = RunReports::open(run);
  if (!reports) return kBadInput;
  block_forwarded_signals();
  const Result result = jail::run(run.spec);
  reports->write(run, result);
  // The command itself not found in OUT: the first thing it lacks (jail's message names it).
  const bool command_missing =
      result.error && result.error->step == "exec" && result.error->errno_value == ENOENT;
  if (result.outcome == Outcome::setup_error && !command_missing) {
    spdlog::error("rootfs check: {}",
                  result.error ? result.error->message : "the run could not be set up");
    return kBadInput;
  }
  if (result.error) spdlog::error("{}", result.error->message);

  std::vector<rootfs::LookedUp> looked_up;
  const Lookups lookups = result.lookups.value_or(Lookups{});
  for (const auto& lookup : lookups.paths) {
    looked_up.push_back({lookup.path, lookup.syscall,
                         lookup.final_link == FinalLink::followed
                             ? rootfs::FinalLink::followed
                             : rootfs::FinalLink::not_followed});
  }
  // jail's own start of the tool runs before the supervisor listens, so it is not recorded:
  // the places it tried are the command's path, or its name in each PATH entry.
  if (command_missing) {
    for (const auto& path : start_candidates(run.spec)) looked_up.push_back({path, "execve"});
  }
  std::vector<std::string> mounts;
  for (const auto& mount : run.spec.mounts) mounts.push_back(mount.target);
  rootfs::CheckReport report;
  try {
    const auto interpreters = rootfs::interpreter_lookups(out, looked_up);
    looked_up.insert(looked_up.end(), interpreters.begin(), interpreters.end());
    report = rootfs::check_lookups(out, looked_up, mounts);
  } catch (const std::exception& error) {
    spdlog::error("rootfs check: {}", error.what());
    return kBadInput;
  }
  std::printf("jail rootfs check: %s %s\n", shown(joined(command)).c_str(),
              command_missing ? "was not found in the root" : describe_outcome(result).c_str());
  print_report(report, lookups, looked_up.size(), out, all);
  return report.missing.empty() && !command_missing ? kNothingMissing : kSomethingMissing;
}

}  // namespace jail::runner
