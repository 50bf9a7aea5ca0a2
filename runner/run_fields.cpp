#include "run_fields.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "run_values.hpp"

namespace jail::runner {
namespace {

// Where each flag was set, from the settings the run took.
class Origins {
 public:
  explicit Origins(const std::vector<FlagSetting>& settings) : settings_(settings) {}

  // The last of `flags` to be set wins, as in the run; "default" when none was.
  [[nodiscard]] std::string of(std::initializer_list<std::string_view> flags) const {
    for (auto it = settings_.rbegin(); it != settings_.rend(); ++it) {
      if (std::find(flags.begin(), flags.end(), it->flag) != flags.end()) return it->origin;
    }
    return kDefaultOrigin;
  }

  [[nodiscard]] std::vector<const FlagSetting*> all(std::string_view flag) const {
    std::vector<const FlagSetting*> out;
    for (const FlagSetting& setting : settings_) {
      if (setting.flag == flag) out.push_back(&setting);
    }
    return out;
  }

  // A variable's origin: the last --env or --pass-env that named it, else jail's default
  // environment.
  [[nodiscard]] std::string of_variable(const std::string& entry) const {
    const std::string name = entry.substr(0, entry.find('='));
    for (auto it = settings_.rbegin(); it != settings_.rend(); ++it) {
      if ((it->flag == "--env" && it->value.starts_with(name + "=")) ||
          (it->flag == "--pass-env" && it->value == name)) {
        return it->origin;
      }
    }
    return kDefaultOrigin;
  }

  // A mount's origin from what parse_bind, parse_tmpfs and add_protected wrote in it.
  [[nodiscard]] std::string of_mount(const Mount& mount) const {
    constexpr std::string_view in_profile = " in profile ";
    constexpr std::string_view protect = "--protect ";
    if (mount.origin.ends_with("on the command line")) return "command line";
    if (const auto at = mount.origin.find(in_profile); at != std::string::npos) {
      return "profile " + mount.origin.substr(at + in_profile.size());
    }
    if (mount.origin.starts_with(protect)) {
      for (const FlagSetting* setting : all("--protect")) {
        if (setting->value == mount.origin.substr(protect.size())) return setting->origin;
      }
    }
    return kDefaultOrigin;  // the current directory, bound unless --no-cwd
  }

 private:
  const std::vector<FlagSetting>& settings_;
};

std::string optional_text(const std::optional<std::uint64_t>& value, std::string_view unset) {
  return value ? std::to_string(*value) : std::string(unset);
}

std::string rlimit_value_text(rlim_t value) {
  return value == RLIM_INFINITY ? "unlimited" : std::to_string(value);
}

// The fields in the order a reviewer reads them: what runs, who, what it sees, what it may use.
class FieldList {
 public:
  explicit FieldList(const std::vector<FlagSetting>& settings) : origins_(settings) {}

  void add(std::string name, nlohmann::json value, std::string text,
           std::initializer_list<std::string_view> flags) {
    fields_.push_back(
        RunField{std::move(name), std::move(value), std::move(text), origins_.of(flags), {}});
  }

  // A list whose items each came from one setting of `flag`, in order.
  void add_list(std::string name, const std::vector<std::string>& values, std::string_view flag) {
    const std::vector<const FlagSetting*> settings = origins_.all(flag);
    RunField field{std::move(name), nlohmann::json::array(), "", kDefaultOrigin, {}, true};
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::string origin = i < settings.size() ? settings[i]->origin : kDefaultOrigin;
      field.items.push_back(RunField{"", values[i], values[i], origin, {}});
    }
    finish_list(std::move(field));
  }

  void add_items(std::string name, std::vector<RunField> items) {
    RunField field{std::move(name), nlohmann::json::array(), "",
                   kDefaultOrigin,  std::move(items),        true};
    finish_list(std::move(field));
  }

  [[nodiscard]] const Origins& origins() const { return origins_; }
  [[nodiscard]] std::vector<RunField> take() { return std::move(fields_); }

 private:
  // A list's own origin names each place that gave it an item, in order.
  void finish_list(RunField field) {
    std::vector<std::string> places;
    for (const RunField& item : field.items) {
      field.value.push_back(item.value);
      if (std::find(places.begin(), places.end(), item.origin) == places.end())
        places.push_back(item.origin);
    }
    const std::size_t n = field.items.size();
    field.text = n == 0 ? "none" : fmt::format("{} {}", n, n == 1 ? "entry" : "entries");
    if (!places.empty()) field.origin = fmt::format("{}", fmt::join(places, ", "));
    fields_.push_back(std::move(field));
  }

  Origins origins_;
  std::vector<RunField> fields_;
};

std::optional<std::string> last_value(const Origins& origins, std::string_view flag) {
  const auto settings = origins.all(flag);
  if (settings.empty()) return std::nullopt;
  return settings.back()->value;
}

nlohmann::json optional_string(const std::optional<std::string>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

void add_command_and_identity(FieldList& out, const Spec& spec) {
  const auto profile = last_value(out.origins(), "--profile");
  out.add("profile", optional_string(profile), profile.value_or("none"), {"--profile"});
  std::vector<RunField> argv;
  for (const std::string& word : spec.argv) {
    argv.push_back(RunField{"", word, word, "command line", {}});
  }
  out.add_items("argv", std::move(argv));
  std::vector<RunField> env;
  for (const std::string& entry : spec.env) {
    env.push_back(RunField{"", entry, entry, out.origins().of_variable(entry), {}});
  }
  out.add_items("env", std::move(env));
  constexpr std::string_view unset_id =
      "unset (a root caller's tool runs as 1000, another caller's as its own)";
  out.add("uid", spec.uid ? nlohmann::json(*spec.uid) : nlohmann::json(nullptr),
          spec.uid ? std::to_string(*spec.uid) : std::string(unset_id), {"--uid"});
  out.add("gid", spec.gid ? nlohmann::json(*spec.gid) : nlohmann::json(nullptr),
          spec.gid ? std::to_string(*spec.gid) : std::string(unset_id), {"--gid"});
  out.add("hostname", spec.hostname, spec.hostname, {"--hostname"});
}

void add_network(FieldList& out, const Spec& spec) {
  out.add("net", net_name(spec.net), std::string(net_name(spec.net)), {"--net"});
  out.add("isolation", isolation_name(spec.isolation), std::string(isolation_name(spec.isolation)),
          {"--isolation"});
  out.add_list("allow_sockets", spec.allow_sockets, "--allow-socket");
  out.add_list("allow_abstract", spec.allow_abstract, "--allow-abstract");
  out.add_list("net_allow", spec.net_allow, "--net-allow");
  out.add("net_allow_private", spec.net_allow_private, spec.net_allow_private ? "yes" : "no",
          {"--net-allow-private"});
  out.add("egress_helper", spec.egress_helper,
          spec.egress_helper.empty() ? "the installed jail-egress" : spec.egress_helper, {});
}

void add_filesystem(FieldList& out, const Spec& spec) {
  out.add("rootfs", optional_string(spec.rootfs), spec.rootfs.value_or("the host's, minimal"),
          {"--rootfs"});
  out.add("cwd", spec.cwd, spec.cwd, {"--cwd", "--no-cwd"});
  std::vector<RunField> mounts;
  for (const Mount& mount : spec.mounts) {
    mounts.push_back(
        RunField{"", mount_json(mount), mount_text(mount), out.origins().of_mount(mount), {}});
  }
  out.add_items("mounts", std::move(mounts));
  out.add("bind_follow",
          std::any_of(spec.mounts.begin(), spec.mounts.end(),
                      [](const Mount& m) { return m.follow_symlinks; }),
          out.origins().all("--bind-follow").empty() ? "no" : "yes", {"--bind-follow"});
  // Each is also among the mounts, as the read-only bind that keeps it.
  std::vector<std::string> protect;
  for (const FlagSetting* setting : out.origins().all("--protect"))
    protect.push_back(setting->value);
  out.add_list("protect", protect, "--protect");
  out.add_list("unmask", spec.unmask, "--unmask");
  out.add("tmp_size", spec.tmp_size_bytes, size_text(spec.tmp_size_bytes), {"--tmpfs-size"});
  out.add("dry_run", spec.dry_run.has_value(), spec.dry_run ? "yes" : "no", {"--dry-run"});
  if (spec.dry_run) {
    const std::string& dir = spec.dry_run->sessions_dir;
    out.add("dry_run.session_dir", dir, dir.empty() ? "the default sessions directory" : dir,
            {"--session-dir"});
    out.add("dry_run.size", optional_json(spec.dry_run->size_bytes),
            size_text(spec.dry_run->size_bytes), {"--dry-run-size"});
  }
}

void add_runtime(FieldList& out, const RunOptions& run) {
  const Spec& spec = run.spec;
  out.add("runtime", runtime_name(spec.runtime), std::string(runtime_name(spec.runtime)),
          {"--runtime"});
  out.add("runsc_platform", spec.runsc_platform,
          spec.runsc_platform.empty() ? "ptrace (runsc's default)" : spec.runsc_platform,
          {"--runsc-platform"});
  out.add("stdio", stdio_name(spec.stdio),
          fmt::format("{}{}", stdio_name(spec.stdio),
                      run.tty_always ? " (--tty always)" : " (a pty only for a terminal)"),
          {"--tty"});
  out.add("input", input_name(spec.input), std::string(input_name(spec.input)), {"--stdin"});
  out.add("max_output", optional_json(spec.max_output_bytes), size_text(spec.max_output_bytes),
          {"--max-output"});
  out.add("policy", spec.policy, spec.policy, {"--policy"});
  out.add("seccomp_mode", spec.seccomp_mode == SeccompMode::learn ? "learn" : "enforce",
          spec.seccomp_mode == SeccompMode::learn ? "learn" : "enforce", {});
  out.add("forward_signals", spec.forward_signals, spec.forward_signals ? "yes" : "no", {});
  out.add("trace_timing", spec.trace_timing, spec.trace_timing ? "yes" : "no", {"--trace-timing"});
}

nlohmann::json optional_ms(const std::optional<std::chrono::milliseconds>& value) {
  return value ? nlohmann::json(value->count()) : nlohmann::json(nullptr);
}

std::string ms_text(const std::optional<std::chrono::milliseconds>& value) {
  return value ? fmt::format("{} ms", value->count()) : "unlimited";
}

void add_limits(FieldList& out, const Spec& spec) {
  const Limits& limits = spec.limits;
  out.add("limits.memory", optional_json(limits.memory_bytes), size_text(limits.memory_bytes),
          {"--memory"});
  out.add("limits.pids", optional_json(limits.pids), optional_text(limits.pids, "unlimited"),
          {"--pids"});
  out.add("limits.cpus", limits.cpus ? nlohmann::json(*limits.cpus) : nlohmann::json(nullptr),
          limits.cpus ? fmt::format("{} cores", *limits.cpus) : "unlimited", {"--cpus"});
  out.add("limits.timeout_ms", optional_ms(limits.timeout), ms_text(limits.timeout), {"--timeout"});
  out.add("limits.kill_grace_ms", limits.kill_grace.count(), ms_text(limits.kill_grace),
          {"--kill-grace"});
  const std::optional<std::chrono::milliseconds> cpu_time =
      limits.cpu_time ? std::optional<std::chrono::milliseconds>(*limits.cpu_time) : std::nullopt;
  out.add("limits.cpu_time_ms", optional_ms(cpu_time), ms_text(cpu_time), {"--cpu-time"});
  out.add("limits.max_file_size", optional_json(limits.max_file_size),
          size_text(limits.max_file_size), {"--max-file-size"});
  out.add("limits.max_open_files", optional_json(limits.max_open_files),
          optional_text(limits.max_open_files, "unlimited (the caller's)"), {"--max-open-files"});
  std::vector<std::string> rlimits;
  for (const Rlimit& r : limits.rlimits) {
    rlimits.push_back(fmt::format("{}={}:{}", rlimit_name(r.resource), rlimit_value_text(r.soft),
                                  rlimit_value_text(r.hard)));
  }
  out.add_list("limits.rlimits", rlimits, "--rlimit");
  out.add("limits.core_dumps", limits.core_dumps, limits.core_dumps ? "yes" : "no", {});
  out.add("cgroup_parent", optional_string(spec.cgroup_parent),
          spec.cgroup_parent.value_or("the caller's own cgroup"), {"--cgroup-parent"});
}

void add_reports(FieldList& out, const RunOptions& run) {
  out.add("status_fd", run.status_fd ? nlohmann::json(*run.status_fd) : nlohmann::json(nullptr),
          run.status_fd ? std::to_string(*run.status_fd) : "none", {"--status-fd"});
  out.add("status_file", optional_string(run.status_file), run.status_file.value_or("none"),
          {"--status-file"});
  out.add("audit_log", optional_string(run.audit_log), run.audit_log.value_or("none"),
          {"--audit-log"});
  out.add("log.verbosity", run.log.verbosity, std::to_string(run.log.verbosity), {"--verbose"});
  out.add("log.quiet", run.log.quiet, run.log.quiet ? "yes" : "no", {"--quiet"});
  out.add("log.file", run.log.file, run.log.file.empty() ? "stderr" : run.log.file, {"--log-file"});
  const bool log_fd = run.log.fd >= 0;
  out.add("log.fd", log_fd ? nlohmann::json(run.log.fd) : nlohmann::json(nullptr),
          log_fd ? std::to_string(run.log.fd) : "none", {"--log-fd"});
  const bool json = run.log.format == LogFormat::json;
  out.add("log.format", json ? "json" : "text", json ? "json" : "text", {"--log-format"});
}

}  // namespace

std::vector<RunField> run_fields(const TracedRunOptions& traced) {
  FieldList out(traced.settings);
  add_command_and_identity(out, traced.run.spec);
  add_network(out, traced.run.spec);
  add_filesystem(out, traced.run.spec);
  add_runtime(out, traced.run);
  add_limits(out, traced.run.spec);
  add_reports(out, traced.run);
  return out.take();
}

}  // namespace jail::runner
