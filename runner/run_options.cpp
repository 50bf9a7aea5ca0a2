#include "run_options.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "jail/colon_fields.hpp"
#include "mount_flags.hpp"
#include "policy/suggest.hpp"
#include "profile.hpp"
#include "units.hpp"

namespace jail::runner {
namespace {

// The egress proxy helper that came with this jail: beside it in a build tree, in
// ../libexec/jail from an installed one (wherever its prefix went). Empty: the library's
// default, the path it was built to be installed at.
std::string egress_helper_beside_jail() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return {};
  for (const auto& candidate : {self.parent_path() / "jail-egress",
                                self.parent_path().parent_path() / "libexec/jail/jail-egress"}) {
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

// The tool's process holds stdio, jail's report channel and its handshake until the exec, and
// installing the seccomp filter takes one more fd for its listener: with 5 it failed, EMFILE.
constexpr rlim_t kMinOpenFiles = 6;
constexpr const char* kMinOpenFilesWhy =
    "stdio, and three that jail's setup holds in the tool's process until it starts";

constexpr const char* kCommandLine = "the command line";

struct RawFlags {
  std::optional<unsigned> uid, gid;
  std::optional<std::string> cwd, rootfs, tmpfs_size, status_file, log_file;
  std::optional<int> status_fd, log_fd;
  std::optional<std::string> max_output, audit_log, profile;
  std::string stdin_mode = "inherit", runtime = "native", runsc_platform;
  std::optional<std::string> memory, cpus, timeout, kill_grace, cpu_time, max_file_size,
      cgroup_parent;
  std::optional<std::uint64_t> pids, max_open_files;
  std::vector<std::string> rlimits;
  bool no_cwd = false, quiet = false, trace_timing = false, dry_run = false, bind_follow = false,
       net_allow_private = false;
  std::optional<std::string> session_dir, dry_run_size;
  int verbosity = 0;
  std::string hostname = "jail", net = "none", log_format = "text", policy = "default",
              tty = "auto", isolation = "auto";
  std::vector<std::string> binds, ro_binds, tmpfs, env, pass_env, protect, unmask, allow_sockets,
      allow_abstract, net_allow;
};

void define_flags(CLI::App& app, RawFlags& f) {
  auto one_each = [](CLI::Option* option) { option->allow_extra_args(false); };
  app.add_option("--profile", f.profile,
                 "TOML file of run flags (keys are flag names); flags given here override it");
  app.add_option("--uid", f.uid, "user id of the tool inside the jail");
  app.add_option("--gid", f.gid, "group id of the tool inside the jail");
  app.add_option("--cwd", f.cwd, "working directory inside the jail (default: the current one)");
  app.add_flag("--no-cwd", f.no_cwd, "do not bind the current directory; start in /");
  one_each(
      app.add_option("--protect", f.protect,
                     "SUBPATH of a writable bind kept read-only (e.g. --bind . --protect .git)"));
  one_each(app.add_option("--unmask", f.unmask,
                          "show a credential store a bind would mask (.ssh, .aws, .netrc, …)"));
  app.add_flag("--bind-follow", f.bind_follow,
               "follow symbolic links in bind sources (refused by default: a tool may plant one)");
  one_each(app.add_option("--bind", f.binds,
                          "bind SRC[:DST] read-write (a ':' in a path is written \\:)"));
  one_each(app.add_option("--ro-bind", f.ro_binds,
                          "bind SRC[:DST] read-only (a ':' in a path is written \\:)"));
  one_each(app.add_option("--tmpfs", f.tmpfs, "a fresh tmpfs at DST[:SIZE]"));
  app.add_flag("--dry-run", f.dry_run,
               "writable binds and the current directory become copy-on-write layers: review with "
               "`jail changes ID`, apply with `jail commit ID`");
  app.add_option("--session-dir", f.session_dir, "where --dry-run keeps its sessions");
  app.add_option("--isolation", f.isolation,
                 "auto (default: namespaces where this caller can make them, else landlock), "
                 "namespaces, or landlock (no namespaces: Landlock and the seccomp policy; "
                 "docs/landlock.md)")
      ->check(CLI::IsMember({"auto", "namespaces", "landlock"}));
  app.add_option("--dry-run-size", f.dry_run_size,
                 "cap on what the tool writes in a --dry-run (default 1G; held in memory while it "
                 "runs), or `unlimited`: written to the session directory, no cap");
  app.add_option("--rootfs", f.rootfs,
                 "use the prepared root DIR (read-only) instead of the host's");
  one_each(app.add_option("--env", f.env, "set K=V in the tool's environment"));
  one_each(app.add_option("--pass-env", f.pass_env, "pass the caller's variable K through"));
  app.add_option("--hostname", f.hostname, "hostname inside the jail")->capture_default_str();
  app.add_option("--net", f.net, "network: none (only lo) or host")
      ->check(CLI::IsMember({"none", "host"}))
      ->capture_default_str();
  one_each(
      app.add_option("--allow-socket", f.allow_sockets,
                     "let the tool connect to the host's Unix socket file PATH (in the jail)"));
  one_each(app.add_option("--allow-abstract", f.allow_abstract,
                          "with --net host, let the tool connect to the abstract socket NAME"));
  one_each(app.add_option(
      "--net-allow", f.net_allow,
      "let the tool reach NAME[:PORT] (*.NAME, an IP, a CIDR range; ports 443 and 80 unless "
      "given) through jail's HTTP proxy, its only way out"));
  app.add_flag("--net-allow-private", f.net_allow_private,
               "let --net-allow names resolve to private addresses (RFC 1918, fc00::/7)");
  app.add_option(
         "--policy", f.policy,
         "seccomp policy: a shipped name (default, python, minimal), a .policy file, or none")
      ->capture_default_str();
  app.add_option("--tty", f.tty, "auto: relay a pty when stdio is a terminal; always; never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  app.add_option("--tmpfs-size", f.tmpfs_size, "size of /tmp (default 256M)");
  app.add_option("--memory", f.memory, "memory of the whole jail, e.g. 512M (swap off)");
  // CLI11 reads "-1" into an unsigned as its wrap-around (2^64-1, or 6 from -2^64+6): a
  // negative count is refused instead.
  const CLI::Validator not_negative(
      [](std::string& text) {
        return !text.empty() && text.front() == '-' ? std::string("a count cannot be negative")
                                                    : std::string();
      },
      "", "not negative");
  app.add_option("--pids", f.pids, "processes and threads of the whole jail")->check(not_negative);
  app.add_option("--cpus", f.cpus, "CPU bandwidth in cores, e.g. 0.5");
  app.add_option("--timeout", f.timeout, "wall-clock limit, e.g. 30s (SIGTERM, then SIGKILL)");
  app.add_option("--kill-grace", f.kill_grace, "time between SIGTERM and SIGKILL (default 2s)");
  app.add_option("--cpu-time", f.cpu_time, "CPU time per process, e.g. 10s (RLIMIT_CPU)");
  app.add_option("--max-file-size", f.max_file_size,
                 "largest file the tool may write (RLIMIT_FSIZE)");
  app.add_option("--max-open-files", f.max_open_files, "open files per process (RLIMIT_NOFILE)")
      ->check(not_negative);
  one_each(app.add_option("--rlimit", f.rlimits, "NAME=VALUE or NAME=SOFT:HARD, e.g. nproc=64"));
  app.add_option("--cgroup-parent", f.cgroup_parent,
                 "create the jail's cgroup under this cgroup path");
  app.add_option("--runtime", f.runtime, "native, or runsc (gVisor's user-space kernel)")
      ->check(CLI::IsMember({"native", "runsc"}))
      ->capture_default_str();
  app.add_option("--runsc-platform", f.runsc_platform, "runsc --platform (default ptrace)");
  app.add_option("--max-output", f.max_output,
                 "relay stdout+stderr and cut them after SIZE bytes (the tool gets EPIPE)");
  app.add_option("--stdin", f.stdin_mode, "inherit, or none (the tool reads /dev/null)")
      ->check(CLI::IsMember({"inherit", "none"}))
      ->capture_default_str();
  app.add_option("--audit-log", f.audit_log,
                 "append one JSON line describing the run to this file");
  app.add_option("--log-fd", f.log_fd, "jail's own messages go to this fd instead of stderr");
  app.add_option("--status-fd", f.status_fd, "write the result as JSON to this fd");
  app.add_option("--status-file", f.status_file, "write the result as JSON to this file");
  app.add_flag("-v,--verbose", f.verbosity, "more of jail's own messages (repeatable)");
  app.add_flag("-q,--quiet", f.quiet, "only errors from jail itself");
  app.add_flag("--trace-timing", f.trace_timing,
               "print where start-up and tear-down time went (ms per phase) on stderr at the end");
  app.add_option("--log-file", f.log_file, "jail's own messages go here instead of stderr");
  app.add_option("--log-format", f.log_format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

// Checked before anything runs: a status or log that cannot be written would be lost after it,
// with the run reported a success.
void check_writable_fd(const char* flag, int fd) {
  if (fd < 0 || ::fcntl(fd, F_GETFD) < 0) {
    throw UsageError(fmt::format("{} {}: not an open file descriptor", flag, fd));
  }
  if (!is_writable_fd(fd)) {
    throw UsageError(fmt::format(
        "{} {}: the descriptor is not open for writing; give one that is, as `{}=3 3>FILE`", flag,
        fd, flag));
  }
}

// A variable's name with a space or a control character in it is one no shell can set or read:
// the sign of a quoting slip ("--env 'A B=1'"), not a name a tool looks for.
void check_variable_name(const char* flag, const std::string& given, const std::string& name) {
  const bool unreadable = std::any_of(name.begin(), name.end(), [](char c) {
    return std::isspace(static_cast<unsigned char>(c)) ||
           std::iscntrl(static_cast<unsigned char>(c));
  });
  if (unreadable) {
    throw UsageError(fmt::format(
        "{} '{}': the name has a space or a control character in it, which no shell can set; "
        "check the quoting",
        flag, given));
  }
}

void set_env(std::vector<std::string>& env, const std::string& entry) {
  const std::string key = entry.substr(0, entry.find('=') + 1);
  std::erase_if(env, [&](const std::string& existing) { return existing.starts_with(key); });
  env.push_back(entry);
}

// --env and --pass-env apply in the order they were given, a profile's first: the command
// line's word for a variable is the last, and wins, whichever of the two flags says it.
// TERM goes along when the tool gets a terminal (a pty), whichever of stdin, stdout and stderr
// the caller's was.
std::vector<std::string> build_env(const RawFlags& f, const CLI::App& app, bool terminal,
                                   std::vector<std::string>& warnings) {
  const char* term = std::getenv("TERM");
  std::vector<std::string> env = default_environment(terminal && term != nullptr ? term : "");
  std::size_t next_pass = 0, next_env = 0;
  for (const CLI::Option* option : app.parse_order()) {
    const std::string name = option->get_name();
    if (name == "--pass-env") {
      const std::string& variable = f.pass_env.at(next_pass++);
      if (variable.empty() || variable.find('=') != std::string::npos) {
        throw UsageError(fmt::format("--pass-env '{}': expected a variable name", variable));
      }
      check_variable_name("--pass-env", variable, variable);
      const char* value = std::getenv(variable.c_str());
      if (value == nullptr) {
        warnings.push_back(fmt::format(
            "--pass-env {}: not set in the caller's environment, not passed", variable));
        continue;
      }
      set_env(env, variable + "=" + value);
    } else if (name == "--env") {
      const std::string& entry = f.env.at(next_env++);
      if (entry.find('=') == std::string::npos || entry.front() == '=') {
        throw UsageError(fmt::format("--env '{}': expected KEY=VALUE", entry));
      }
      check_variable_name("--env", entry, entry.substr(0, entry.find('=')));
      set_env(env, entry);
    }
  }
  return env;
}

// The home directory /etc/passwd gives `uid` (read as a file: getpwuid would pull NSS modules
// into a static jail).
std::optional<std::string> home_in_passwd(uid_t uid) {
  std::ifstream passwd("/etc/passwd");
  const std::string id = std::to_string(uid);
  for (std::string line; std::getline(passwd, line);) {
    // name:password:uid:gid:gecos:home:shell
    const std::vector<std::string> fields = jail::colon_fields(line);
    if (fields.size() >= 6 && fields[2] == id && fields[5].starts_with('/')) return fields[5];
  }
  return std::nullopt;
}

// The caller's home directory ($HOME, and the password database's) when `dir` is it or contains
// it; nullopt otherwise.
std::optional<std::string> home_within(const std::string& dir) {
  std::vector<std::string> homes;
  if (const char* env = std::getenv("HOME"); env != nullptr && env[0] == '/') homes.push_back(env);
  if (const auto entry = home_in_passwd(::getuid())) homes.push_back(*entry);
  for (const std::string& home : homes) {
    std::error_code error;
    const std::filesystem::path resolved = std::filesystem::weakly_canonical(home, error);
    if (error || resolved == "/") continue;
    const std::filesystem::path inside = resolved.lexically_relative(dir);
    if (!inside.empty() && *inside.begin() != "..") return resolved.string();
  }
  return std::nullopt;
}

// The caller's directory is bound read-only at its own path and is where the tool starts,
// unless --no-cwd, a prepared --rootfs (which may not have that path), or it is "/".
void add_cwd(Spec& spec, const RawFlags& f, std::vector<std::string>& notes) {
  std::error_code error;
  const std::string here = std::filesystem::current_path(error).string();
  const bool bind_here = !f.no_cwd && !f.rootfs && !error && here != "/";
  // A prepared root is the tool's whole world: the current directory is not put into it (bound
  // where the root has that path, it would hide the root's own files there). Said at -v, as the
  // reason a script named relative to it is not found.
  if (f.rootfs && !f.no_cwd && !f.cwd && !error && here != "/") {
    notes.push_back(fmt::format(
        "under --rootfs the current directory {} is not bound and the tool starts in /; to give "
        "it the directory: --ro-bind .:/tmp/work --cwd /tmp/work",
        here));
  }
  // The jail has its own /proc, /sys and /dev: the current directory bound over one of them
  // showed the tool the host's (every host process in /proc, with its command line).
  for (const std::string kernel_dir : {"/proc", "/sys", "/dev"}) {
    if (!bind_here || (here != kernel_dir && !here.starts_with(kernel_dir + "/"))) continue;
    throw UsageError(fmt::format(
        "the current directory {} is under {}, which the jail has its own of: bound there, it "
        "would show the tool the host's {}. Run jail from another directory, or pass --no-cwd "
        "(with --cwd DIR for where the tool starts)",
        here, kernel_dir, kernel_dir));
  }
  // Bound over the jail's own /tmp or /etc, the current directory would show the host's: its
  // /tmp's sockets (X11, agents), which a read-only bind does not keep the tool from connecting
  // to, and /etc's machine-id and hostname. /run (and /var/run, its link) is where the host's
  // services listen (D-Bus, Docker); the jail has none of it.
  const bool own_place = here == "/tmp" || here == "/etc";
  const bool host_services = here == "/run" || here.starts_with("/run/") || here == "/var/run" ||
                             here.starts_with("/var/run/");
  if (bind_here && (own_place || host_services)) {
    throw UsageError(fmt::format(
        "the current directory {} would show the tool {}; run jail from another directory, or "
        "pass --no-cwd (with --cwd DIR for where the tool starts)",
        here,
        own_place ? fmt::format("the host's {} in place of the jail's own", here)
                  : "the sockets the host's services listen on (D-Bus, Docker, …)"));
  }
  if (bind_here) {
    if (const auto home = home_within(here)) {
      throw UsageError(fmt::format(
          "the current directory {} {}: bound by default, it would show the tool ~/.ssh, "
          "~/.gnupg, tokens and shell history. Run jail from a project directory, bind what the "
          "tool needs (--ro-bind DIR or --bind DIR, with --cwd DIR), or pass --no-cwd",
          here,
          *home == here ? "is your home directory" : "contains your home directory " + *home));
    }
    // A dry run makes it writable: the tool's writes land in the session, not here.
    spec.mounts.insert(spec.mounts.begin(),
                       Mount{f.dry_run ? MountKind::bind : MountKind::ro_bind, here, here,
                             std::nullopt, "the current directory (use --no-cwd to leave it out)"});
  }
  spec.cwd = f.cwd ? *f.cwd : (bind_here ? here : "/");
}

std::uint64_t size_flag(const char* flag, const std::string& text) {
  SizeProblem problem{};
  const auto size = parse_size(text, &problem);
  if (size && *size == 0) {
    throw UsageError(
        fmt::format("{} '{}': must be more than 0 (nothing could run within it); "
                    "leave {} out for no limit",
                    flag, text, flag));
  }
  if (!size) throw UsageError(fmt::format("{} '{}': {}", flag, text, size_problem_text(problem)));
  return *size;
}

// --dry-run-size: a size, or "unlimited" (nothing: layers on disk, as before there was a cap).
std::optional<std::uint64_t> dry_run_size(const std::string& text) {
  if (text == "unlimited") return std::nullopt;
  SizeProblem problem{};
  const auto size = parse_size(text, &problem);
  if (!size || *size < (1u << 20)) {
    throw UsageError(fmt::format(
        "--dry-run-size '{}': {}; give a size of at least 1M (like 512M or 4G), or `unlimited`",
        text, size ? "too small for a layer" : size_problem_text(problem)));
  }
  return size;
}

std::chrono::milliseconds duration_flag(const char* flag, const std::string& text,
                                        bool allow_zero) {
  DurationProblem problem{};
  const auto duration = parse_duration(text, &problem);
  if (!duration) {
    throw UsageError(fmt::format("{} '{}': {}", flag, text, duration_problem_text(problem)));
  }
  if (!allow_zero && duration->count() == 0) {
    throw UsageError(
        fmt::format("{} '{}': a limit of no time at all; give more than 0", flag, text));
  }
  return *duration;
}

rlim_t rlimit_value(const std::string& flag_text, const std::string& text) {
  if (text == "unlimited" || text == "infinity") return RLIM_INFINITY;
  SizeProblem problem{};
  const auto value = parse_size(text, &problem);
  if (!value) {
    throw UsageError(fmt::format(
        "--rlimit '{}': '{}' is {}", flag_text, text,
        problem == SizeProblem::not_a_size ? "not a number" : size_problem_text(problem)));
  }
  return *value;
}

Rlimit parse_rlimit(const std::string& text) {
  const auto equals = text.find('=');
  const auto resource = rlimit_resource(text.substr(0, equals));
  if (equals == std::string::npos || !resource) {
    throw UsageError(fmt::format(
        "--rlimit '{}': expected NAME=VALUE with NAME one of as core cpu data fsize locks memlock "
        "msgqueue nice nofile nproc rss rtprio rttime sigpending stack",
        text));
  }
  const std::string value = text.substr(equals + 1);
  const auto colon = value.find(':');
  Rlimit limit{*resource, rlimit_value(text, value.substr(0, colon)), 0};
  limit.hard =
      colon == std::string::npos ? limit.soft : rlimit_value(text, value.substr(colon + 1));
  if (limit.soft > limit.hard) {
    throw UsageError(fmt::format("--rlimit '{}': the soft limit is above the hard one", text));
  }
  if (limit.resource == RLIMIT_NOFILE && limit.soft < kMinOpenFiles) {
    // As --max-open-files: jail itself needs fds in the tool's process before the exec (the
    // seccomp filter's install failed with EMFILE, naming neither the flag nor the limit).
    throw UsageError(fmt::format("--rlimit '{}': nofile needs at least {} ({})", text,
                                 kMinOpenFiles, kMinOpenFilesWhy));
  }
  if (limit.resource == RLIMIT_NOFILE && limit.hard == RLIM_INFINITY) {
    throw UsageError(fmt::format(
        "--rlimit '{}': nofile cannot be unlimited (the kernel caps it at fs.nr_open); give a "
        "number",
        text));
  }
  return limit;
}

Limits build_limits(const RawFlags& f) {
  Limits limits;
  if (f.memory) {
    limits.memory_bytes = size_flag("--memory", *f.memory);
    // Below this nothing starts (the jail's init and the exec of `true` take ~0.5 MiB here),
    // and the run was reported as the tool running out of memory though it never ran.
    constexpr std::uint64_t kLeastMemory = 1 << 20;
    if (*limits.memory_bytes < kLeastMemory) {
      throw UsageError(fmt::format(
          "--memory {}: too little for anything to start (the jail's init and the tool's exec "
          "take about 0.5 MiB); give at least 1M",
          *f.memory));
    }
  }
  if (f.pids) {
    if (*f.pids < 2) {
      throw UsageError(fmt::format(
          "--pids {}: at least 2 (the jail's init and the tool each count as one)", *f.pids));
    }
    // The kernel's own ceiling on pids (PID_MAX_LIMIT); the cgroup refuses more with EINVAL.
    constexpr std::uint64_t kMaxPids = 4'194'304;
    if (*f.pids > kMaxPids) {
      throw UsageError(fmt::format("--pids {}: at most {}, the kernel's limit on process ids",
                                   *f.pids, kMaxPids));
    }
    limits.pids = *f.pids;
  }
  if (f.cpus) {
    char* end = nullptr;
    const double cpus = std::strtod(f.cpus->c_str(), &end);
    if (end == f.cpus->c_str() || *end != '\0' || !(cpus > 0) || cpus > 4096) {
      throw UsageError(
          fmt::format("--cpus '{}': expected a number of cores like 0.5 or 2", *f.cpus));
    }
    if (cpus < 0.01) {
      // The kernel's CFS bandwidth has a 1 ms quota per 100 ms period at least: smaller was
      // quietly raised to 0.01.
      throw UsageError(
          fmt::format("--cpus '{}': the least the kernel can enforce is 0.01 of a core", *f.cpus));
    }
    limits.cpus = cpus;
  }
  if (f.timeout) limits.timeout = duration_flag("--timeout", *f.timeout, false);
  if (f.kill_grace) limits.kill_grace = duration_flag("--kill-grace", *f.kill_grace, true);
  if (f.cpu_time) {
    const auto ms = duration_flag("--cpu-time", *f.cpu_time, false);
    // RLIMIT_CPU counts whole seconds; round up so the limit is never stricter than asked.
    limits.cpu_time = std::chrono::ceil<std::chrono::seconds>(ms);
  }
  if (f.max_file_size) limits.max_file_size = size_flag("--max-file-size", *f.max_file_size);
  if (f.max_open_files) {
    if (*f.max_open_files < kMinOpenFiles) {
      throw UsageError(
          fmt::format("--max-open-files: at least {} ({})", kMinOpenFiles, kMinOpenFilesWhy));
    }
    limits.max_open_files = *f.max_open_files;
  }
  for (const auto& text : f.rlimits) limits.rlimits.push_back(parse_rlimit(text));
  // One limit from two flags: --rlimit won, while the status reported the other.
  const struct {
    int resource;
    const char* flag;
    bool given;
  } same_limit[] = {{RLIMIT_CPU, "--cpu-time", f.cpu_time.has_value()},
                    {RLIMIT_FSIZE, "--max-file-size", f.max_file_size.has_value()},
                    {RLIMIT_NOFILE, "--max-open-files", f.max_open_files.has_value()}};
  for (const Rlimit& r : limits.rlimits) {
    for (const auto& [resource, flag, given] : same_limit) {
      if (r.resource == resource && given) {
        throw UsageError(fmt::format("{} and --rlimit {}=… set the same limit; give one", flag,
                                     rlimit_name(resource)));
      }
    }
  }
  return limits;
}

// jail's own words for what CLI11 refuses: the flag, the value, why, and a did-you-mean for a
// misspelt flag. CLI11's messages ("Could not convert: --uid = 99999999999", "The following
// arguments were not expected: 1G --memroy") name neither the rule nor the fix.
std::string usage_message(const CLI::App& app, const std::vector<std::string>& options,
                          const CLI::ParseError& error) {
  const std::string what = error.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    std::vector<std::string> flags;
    for (const CLI::Option* option : app.get_options()) {
      for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
      for (const std::string& name : option->get_snames()) flags.push_back("-" + name);
    }
    for (const std::string& word : options) {
      if (word.size() < 2 || word[0] != '-') continue;
      const std::string flag = word.substr(0, word.find('='));
      if (std::find(flags.begin(), flags.end(), flag) != flags.end()) continue;
      return fmt::format("unknown flag {}{}; jail --help lists them (the command goes after '--')",
                         flag, policy::detail::did_you_mean(flag, flags));
    }
    return fmt::format(
        "{}: a word that is no flag's value; the command goes after '--': jail "
        "[OPTIONS] -- COMMAND [ARGS...]",
        what.substr(what.find(':') + 2));
  }
  if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
    // "Could not convert: --uid = 99999999999"
    const std::size_t colon = what.find(": ");
    const std::size_t equals = what.find(" = ");
    if (colon != std::string::npos && equals != std::string::npos && equals > colon) {
      const std::string flag = what.substr(colon + 2, equals - colon - 2);
      return fmt::format(
          "{} '{}': not a value it takes (a whole number in its range); see jail "
          "--help",
          flag, what.substr(equals + 3));
    }
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
    return fmt::format("{}: give the flag a value, as jail --help shows", what);
  }
  return fmt::format("{} (see jail --help)", what);
}

// CLI11 takes the words reversed; --help and errors become the runner's own exceptions.
void parse_flags(CLI::App& app, const std::vector<std::string>& options) {
  std::vector<std::string> reversed(options.rbegin(), options.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    throw HelpRequested{app.help()};
  } catch (const CLI::ParseError& error) {
    throw UsageError(usage_message(app, options, error));
  }
}

}  // namespace

bool is_writable_fd(int fd) {
  const int flags = fd < 0 ? -1 : ::fcntl(fd, F_GETFL);
  return flags >= 0 && (flags & O_PATH) == 0 && (flags & O_ACCMODE) != O_RDONLY;
}

// The run's usage line shows the command after "--" and the subcommands, which CLI11's own
// ("jail [OPTIONS]") leaves out.
class RunUsage : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* /*app*/, std::string /*name*/) const override {
    return "Usage: jail [OPTIONS] -- COMMAND [ARGS...]\n"
           "       jail explain [OPTIONS] [-- COMMAND...]   the effective run, each field's "
           "origin\n"
           "       jail diff A.toml B.toml   where profile B's run is wider than A's (exit 1)\n"
           "       jail SUBCOMMAND ... (policy, rootfs, export-oci, doctor, changes, commit, "
           "undo, discard, sessions; each takes --help)\n"
           "       jail --version\n";
  }
};

namespace {

// The run's options from its parsed flags (a profile's already among them).
RunOptions options_from_flags(const RawFlags& f, const CLI::App& app,
                              const std::vector<std::string>& mount_origins,
                              const std::vector<std::string>& command);

// The flags of the command line, each word with its value, in the order given.
std::vector<FlagSetting> command_line_settings(const CLI::App& app) {
  std::vector<FlagSetting> settings;
  std::map<const CLI::Option*, std::size_t> seen;
  for (const CLI::Option* option : app.parse_order()) {
    const std::vector<std::string>& results = option->results();
    const std::size_t index = seen[option]++;
    settings.push_back(FlagSetting{option->get_name(),
                                   index < results.size() ? results[index] : std::string(),
                                   "command line"});
  }
  return settings;
}

// A value a profile set is wrong: the message, which names the flag, gets the profile's line. Its
// lists' mounts carry their own place; a list's other items are not traced back to a line.
std::string with_profile_place(const std::string& message,
                               const std::map<std::string, std::string>& profile_places) {
  for (const auto& [flag, where] : profile_places) {
    if (message.starts_with(flag + " ") || message.starts_with(flag + ":")) {
      return fmt::format("{} (in profile {})", message, where);
    }
  }
  return message;
}

}  // namespace

RunOptions parse_run_options(const std::vector<std::string>& options,
                             const std::vector<std::string>& command) {
  return parse_traced_run_options(options, command).run;
}

TracedRunOptions parse_traced_run_options(const std::vector<std::string>& options,
                                          const std::vector<std::string>& command) {
  auto new_app = [] {
    auto app = std::make_unique<CLI::App>(
        "Run COMMAND isolated: its own namespaces, a minimal read-only root, no capabilities, "
        "no network.",
        "jail");
    app->formatter(std::make_shared<RunUsage>());
    return app;
  };
  auto app = new_app();
  RawFlags f;
  define_flags(*app, f);
  parse_flags(*app, options);
  std::vector<FlagSetting> settings = command_line_settings(*app);
  // A profile's settings go in front of the command line's, except flags the command line
  // sets itself: then the command line wins. Lists (mounts, env) take both, profile first.
  std::vector<std::string> mount_origins;             // of the profile's mounts, in order
  std::map<std::string, std::string> profile_places;  // flag → where the profile set it
  if (f.profile) {
    const Profile profile = load_profile(*f.profile);
    std::vector<std::string> words;
    std::vector<FlagSetting> from_profile;
    for (const auto& setting : profile.settings) {
      const bool list = setting.flag == "--bind" || setting.flag == "--ro-bind" ||
                        setting.flag == "--tmpfs" || setting.flag == "--env" ||
                        setting.flag == "--pass-env" || setting.flag == "--rlimit" ||
                        setting.flag == "--protect" || setting.flag == "--unmask" ||
                        setting.flag == "--allow-socket" || setting.flag == "--allow-abstract" ||
                        setting.flag == "--net-allow";
      if (!list && app->get_option(setting.flag)->count() > 0) continue;  // the command line's
      // --flag=value: a value that starts with a dash stays a value.
      words.push_back(setting.value ? setting.flag + "=" + *setting.value : setting.flag);
      if (setting.flag == "--bind" || setting.flag == "--ro-bind" || setting.flag == "--tmpfs")
        mount_origins.push_back("in profile " + setting.where);
      if (!list) profile_places[setting.flag] = setting.where;
      from_profile.push_back(
          FlagSetting{setting.flag, setting.value.value_or(""), "profile " + setting.where});
    }
    settings.insert(settings.begin(), from_profile.begin(), from_profile.end());
    words.insert(words.end(), options.begin(), options.end());
    // A fresh parser: CLI11 keeps the first parse's order, which the mounts below walk.
    app = new_app();
    f = RawFlags{};
    define_flags(*app, f);
    parse_flags(*app, words);
  }
  try {
    return TracedRunOptions{options_from_flags(f, *app, mount_origins, command),
                            std::move(settings)};
  } catch (const UsageError& error) {
    throw UsageError(with_profile_place(error.what(), profile_places));
  }
}

namespace {

RunOptions options_from_flags(const RawFlags& f, const CLI::App& app,
                              const std::vector<std::string>& mount_origins,
                              const std::vector<std::string>& command) {
  RunOptions run;
  run.log.verbosity = f.verbosity;
  run.log.quiet = f.quiet;
  run.log.file = f.log_file.value_or("");
  if (f.log_fd && f.log_file) {
    throw UsageError("--log-fd and --log-file both say where jail's messages go; give one");
  }
  if (f.log_fd) {
    check_writable_fd("--log-fd", *f.log_fd);
    run.log.fd = *f.log_fd;
  }
  run.log.format = f.log_format == "json" ? LogFormat::json : LogFormat::text;
  // Checked first: a refused fd is not where the refusal is then written.
  if (f.status_fd) check_writable_fd("--status-fd", *f.status_fd);
  run.status_fd = f.status_fd;
  run.status_file = f.status_file;
  run.audit_log = f.audit_log;

  Spec& spec = run.spec;
  spec.argv = command;
  // 4294967295 is (uid_t)-1, "no id" to the kernel: no uid map can name it.
  for (const auto& [flag, id] : {std::pair{"--uid", f.uid}, std::pair{"--gid", f.gid}}) {
    if (id && *id == static_cast<unsigned>(-1)) {
      throw UsageError(
          fmt::format("{} {}: not an id the kernel can map (it means \"none\"); "
                      "give one below it",
                      flag, *id));
    }
  }
  if (f.uid) spec.uid = *f.uid;
  if (f.gid) spec.gid = *f.gid;
  spec.hostname = f.hostname;
  spec.net = f.net == "host" ? Net::host : Net::none;
  spec.isolation = f.isolation == "landlock"     ? Isolation::landlock
                   : f.isolation == "namespaces" ? Isolation::namespaces
                                                 : Isolation::automatic;
  if (f.rootfs) {
    if (f.rootfs->empty()) throw UsageError("--rootfs '': expected a directory");
    spec.rootfs = absolute_host_path(*f.rootfs);
  }
  if (f.tmpfs_size) {
    const auto size = parse_size(*f.tmpfs_size);
    if (!size || *size == 0) {
      throw UsageError(fmt::format("--tmpfs-size '{}': not a size like 64M or 1G", *f.tmpfs_size));
    }
    spec.tmp_size_bytes = *size;
  }
  // Mounts apply in command-line order across the three flags: a later mount may sit on an
  // earlier one, as with bwrap.
  std::size_t next_bind = 0, next_ro_bind = 0, next_tmpfs = 0, next_mount = 0;
  std::vector<bool> from_profile;  // of each mount in spec.mounts
  const std::string on_command_line = std::string("on ") + kCommandLine;
  for (const CLI::Option* option : app.parse_order()) {
    const std::string name = option->get_name();
    if (name != "--bind" && name != "--ro-bind" && name != "--tmpfs") continue;
    from_profile.push_back(next_mount < mount_origins.size());
    const std::string& from =
        next_mount < mount_origins.size() ? mount_origins[next_mount] : on_command_line;
    ++next_mount;
    if (name == "--bind") {
      spec.mounts.push_back(parse_bind(f.binds.at(next_bind++), MountKind::bind, "--bind", from));
    } else if (name == "--ro-bind") {
      spec.mounts.push_back(
          parse_bind(f.ro_binds.at(next_ro_bind++), MountKind::ro_bind, "--ro-bind", from));
    } else {
      spec.mounts.push_back(parse_tmpfs(f.tmpfs.at(next_tmpfs++), from));
    }
  }
  warn_of_hidden_mounts(spec.mounts, from_profile, run.log.warnings);
  for (Mount& mount : spec.mounts) mount.follow_symlinks = f.bind_follow;
  spec.limits = build_limits(f);
  spec.policy = f.policy;
  if (f.max_output) spec.max_output_bytes = size_flag("--max-output", *f.max_output);
  if (f.stdin_mode == "none") spec.input = Input::none;
  // A caller's terminal is never handed to the tool: with one on stdio, the tool gets a pty.
  const bool terminal =
      ::isatty(STDIN_FILENO) || ::isatty(STDOUT_FILENO) || ::isatty(STDERR_FILENO);
  spec.runtime = f.runtime == "runsc" ? Runtime::runsc : Runtime::native;
  spec.runsc_platform = f.runsc_platform;
  if (!f.runsc_platform.empty() && spec.runtime != Runtime::runsc) {
    throw UsageError("--runsc-platform is for --runtime runsc; add that, or leave it out");
  }
  if (f.kill_grace && !f.timeout) {
    run.log.warnings.emplace_back(
        "--kill-grace applies after --timeout's SIGTERM; without --timeout it does nothing");
  }
  run.tty_always = f.tty == "always";
  if (spec.runtime == Runtime::runsc && f.tty != "always") {
    // Under runsc the tool's stdio is relayed through pipes (the caller's terminal is never
    // handed to runsc, which would chown it): no terminal for the tool. --tty always asks for
    // one, and check_spec says it cannot be had.
  } else if (f.tty == "always" || (f.tty == "auto" && terminal)) {
    spec.stdio = Stdio::pty;
  } else if (f.tty == "never" && terminal) {
    run.log.warnings.emplace_back(
        "--tty never with a terminal on stdio: the tool gets it in its own session, "
        "so it cannot inject input (TIOCSTI), but it can still write to it directly");
  }
  spec.cgroup_parent = f.cgroup_parent;
  add_cwd(spec, f, run.log.notes);
  add_protected(spec.mounts, f.protect);
  for (const std::string& path : f.unmask) spec.unmask.push_back(host_path_key(path));
  spec.allow_sockets = f.allow_sockets;
  spec.allow_abstract = f.allow_abstract;
  spec.net_allow = f.net_allow;
  spec.net_allow_private = f.net_allow_private;
  spec.egress_helper = egress_helper_beside_jail();
  if (f.dry_run) {
    spec.dry_run =
        DryRun{f.session_dir ? absolute_host_path(*f.session_dir) : std::string{}, spec.argv};
    if (f.dry_run_size) spec.dry_run->size_bytes = dry_run_size(*f.dry_run_size);
  } else if (f.session_dir || f.dry_run_size) {
    throw UsageError(fmt::format("{} is for --dry-run; add --dry-run or leave it out",
                                 f.session_dir ? "--session-dir" : "--dry-run-size"));
  }
  spec.env = build_env(f, app, spec.stdio == Stdio::pty, run.log.warnings);
  spec.forward_signals = true;
  spec.trace_timing = f.trace_timing;
  return run;
}

}  // namespace

}  // namespace jail::runner
