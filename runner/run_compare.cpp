#include "run_compare.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "policy/diagnostics.hpp"
#include "policy/diff.hpp"
#include "policy/policy.hpp"
#include "run_values.hpp"

namespace jail::runner {

std::string_view to_string(Widening widening) {
  switch (widening) {
    case Widening::wider:
      return "wider";
    case Widening::narrower:
      return "narrower";
    case Widening::changed:
      break;
  }
  return "changed";
}

namespace {

// The directions a field moved in, folded into one verdict: any widening makes it wider.
struct Verdict {
  bool wider = false, narrower = false;
  std::vector<std::string> why;

  void widened(std::string reason) { wider = true, why.push_back(std::move(reason)); }
  void narrowed(std::string reason) { narrower = true, why.push_back(std::move(reason)); }
  [[nodiscard]] Widening result() const {
    return wider ? Widening::wider : narrower ? Widening::narrower : Widening::changed;
  }
};

class Comparison {
 public:
  void add(std::string field, Widening change, nlohmann::json before, nlohmann::json after,
           std::string why) {
    changes_.push_back(
        RunChange{std::move(field), change, std::move(before), std::move(after), std::move(why)});
  }

  void add(std::string field, const Verdict& verdict, nlohmann::json before, nlohmann::json after) {
    add(std::move(field), verdict.result(), std::move(before), std::move(after),
        fmt::format("{}", fmt::join(verdict.why, "; ")));
  }

  // Different, and neither more nor less: env, hostname, cwd, argv and the like.
  void changed(std::string field, const nlohmann::json& before, const nlohmann::json& after) {
    if (before != after) add(std::move(field), Widening::changed, before, after, "");
  }

  // A limit: unset is none at all, so removing one or raising it is wider.
  template <typename T>
  void limit(std::string field, const std::optional<T>& before, const std::optional<T>& after,
             const nlohmann::json& before_json, const nlohmann::json& after_json) {
    if (before == after) return;
    if (!after) {
      add(std::move(field), Widening::wider, before_json, after_json, "the limit is gone");
    } else if (!before) {
      add(std::move(field), Widening::narrower, before_json, after_json, "a new limit");
    } else {
      const bool larger = *after > *before;
      add(std::move(field), larger ? Widening::wider : Widening::narrower, before_json, after_json,
          larger ? "a larger limit" : "a smaller limit");
    }
  }

  template <typename T>
  void limit(std::string field, const std::optional<T>& before, const std::optional<T>& after) {
    limit(std::move(field), before, after,
          before ? nlohmann::json(*before) : nlohmann::json(nullptr),
          after ? nlohmann::json(*after) : nlohmann::json(nullptr));
  }

  // A list of things the tool is let at: any new entry is wider.
  void openings(std::string field, const std::vector<std::string>& before,
                const std::vector<std::string>& after) {
    Verdict verdict;
    for (const std::string& entry : after) {
      if (std::find(before.begin(), before.end(), entry) == before.end())
        verdict.widened("new: " + entry);
    }
    for (const std::string& entry : before) {
      if (std::find(after.begin(), after.end(), entry) == after.end())
        verdict.narrowed("gone: " + entry);
    }
    if (verdict.wider || verdict.narrower) add(std::move(field), verdict, before, after);
  }

  // A switch that lets the tool do more when it is on.
  void opening(std::string field, bool before, bool after, std::string_view what) {
    if (before == after) return;
    add(std::move(field), after ? Widening::wider : Widening::narrower, before, after,
        fmt::format("{} {}", what, after ? "allowed" : "no longer allowed"));
  }

  // An order of strictness, least open first.
  void ranked(std::string field, int before_rank, int after_rank, const nlohmann::json& before,
              const nlohmann::json& after) {
    if (before == after) return;
    const Widening change = after_rank > before_rank   ? Widening::wider
                            : after_rank < before_rank ? Widening::narrower
                                                       : Widening::changed;
    add(std::move(field), change, before, after, "");
  }

  [[nodiscard]] std::vector<RunChange> take() { return std::move(changes_); }

 private:
  std::vector<RunChange> changes_;
};

// none (only lo) < an allow-list through the proxy < the host's network.
int net_rank(const Spec& spec) {
  if (spec.net == Net::host) return 2;
  return spec.net_allow.empty() ? 0 : 1;
}

std::string net_mode(const Spec& spec) {
  return net_rank(spec) == 2 ? "host" : net_rank(spec) == 1 ? "allow-list" : "none";
}

// uid or gid 0 inside the jail is root there, where it was not.
void identity(Comparison& out, std::string field, const std::optional<unsigned>& before,
              const std::optional<unsigned>& after) {
  if (before == after) return;
  const auto json = [](const std::optional<unsigned>& id) {
    return id ? nlohmann::json(*id) : nlohmann::json(nullptr);
  };
  const bool root_before = before == 0u, root_after = after == 0u;
  const Widening change = root_after && !root_before   ? Widening::wider
                          : root_before && !root_after ? Widening::narrower
                                                       : Widening::changed;
  out.add(std::move(field), change, json(before), json(after),
          change == Widening::changed ? "" : "id 0 (root in the jail's namespace)");
}

void compare_identity(Comparison& out, const Spec& a, const Spec& b) {
  out.changed("argv", a.argv, b.argv);
  std::map<std::string, std::pair<nlohmann::json, nlohmann::json>> env;
  const auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  for (const std::string& entry : a.env) env[name_of(entry)] = {entry, nullptr};
  for (const std::string& entry : b.env) env[name_of(entry)].second = entry;
  for (const auto& [name, values] : env) {
    if (values.first.is_null()) {
      out.changed("env[" + name + "]", nullptr, values.second);
    } else {
      out.changed("env[" + name + "]", values.first, values.second);
    }
  }
  identity(out, "uid", a.uid, b.uid);
  identity(out, "gid", a.gid, b.gid);
  out.changed("hostname", a.hostname, b.hostname);
}

void compare_network(Comparison& out, const Spec& a, const Spec& b) {
  out.ranked("net", net_rank(a), net_rank(b), net_mode(a), net_mode(b));
  // Between two allow-lists; from or to another mode, "net" above says it.
  if (net_rank(a) == 1 && net_rank(b) == 1) {
    out.openings("net_allow", a.net_allow, b.net_allow);
    out.opening("net_allow_private", a.net_allow_private, b.net_allow_private, "private addresses");
  }
  out.openings("allow_sockets", a.allow_sockets, b.allow_sockets);
  out.openings("allow_abstract", a.allow_abstract, b.allow_abstract);
  // namespaces < auto (namespaces where it can) < landlock (no namespaces at all).
  const auto isolation_rank = [](Isolation i) {
    return i == Isolation::namespaces ? 0 : i == Isolation::automatic ? 1 : 2;
  };
  out.ranked("isolation", isolation_rank(a.isolation), isolation_rank(b.isolation),
             isolation_name(a.isolation), isolation_name(b.isolation));
}

std::string target_key(std::string target) {
  while (target.size() > 1 && target.back() == '/') target.pop_back();
  return target;
}

// The mount the tool sees at each target: a later one sits on an earlier one. Between targets,
// the order they go on in is compare_mount_order's.
std::map<std::string, Mount> mounts_by_target(const Spec& spec) {
  std::map<std::string, Mount> out;
  for (const Mount& mount : spec.mounts) {
    Mount shown = mount;
    if (shown.kind == MountKind::tmpfs && !shown.size_bytes) shown.size_bytes = spec.tmp_size_bytes;
    out[target_key(mount.target)] = shown;
  }
  return out;
}

// A writable bind above `target` shows the host's files there when nothing else does.
const Mount* writable_bind_above(const std::map<std::string, Mount>& mounts,
                                 const std::string& target) {
  const Mount* above = nullptr;
  std::size_t longest = 0;
  for (const auto& [path, mount] : mounts) {
    const bool contains = path == "/" || target.starts_with(path + "/");
    if (contains && path.size() >= longest) above = &mount, longest = path.size();
  }
  return above != nullptr && above->kind == MountKind::bind ? above : nullptr;
}

// How open a mount is to the tool: a fresh tmpfs shows nothing of the host, a read-only bind
// shows it, a writable bind lets the tool change it.
int exposure(MountKind kind) {
  return kind == MountKind::tmpfs ? 0 : kind == MountKind::ro_bind ? 1 : 2;
}

Verdict compare_mount(const Mount& a, const Mount& b) {
  Verdict verdict;
  if (exposure(b.kind) > exposure(a.kind)) {
    verdict.widened(fmt::format("{} became {}", mount_kind_name(a.kind), mount_kind_name(b.kind)));
  } else if (exposure(b.kind) < exposure(a.kind)) {
    verdict.narrowed(fmt::format("{} became {}", mount_kind_name(a.kind), mount_kind_name(b.kind)));
  }
  if (a.kind != MountKind::tmpfs && b.kind != MountKind::tmpfs && a.source != b.source) {
    // Host files the tool did not see before: as a new bind, whatever it hides in exchange.
    verdict.widened("another host path: " + b.source);
  }
  if (a.kind == MountKind::tmpfs && b.kind == MountKind::tmpfs && a.size_bytes != b.size_bytes) {
    if (b.size_bytes > a.size_bytes) {
      verdict.widened("a larger tmpfs");
    } else {
      verdict.narrowed("a smaller tmpfs");
    }
  }
  if (b.follow_symlinks && !a.follow_symlinks) verdict.widened("symbolic links followed");
  if (a.follow_symlinks && !b.follow_symlinks) verdict.narrowed("symbolic links refused");
  return verdict;
}

// Where each target's mount (the last one there) comes in the order the mounts go on.
std::map<std::string, std::size_t> mount_places(const Spec& spec) {
  std::map<std::string, std::size_t> out;
  for (std::size_t i = 0; i < spec.mounts.size(); ++i) out[target_key(spec.mounts[i].target)] = i;
  return out;
}

bool below(const std::string& inner, const std::string& outer) {
  return outer == "/" ? inner != "/" : inner.starts_with(outer + "/");
}

// A mount covers whatever went on before it at or below its target, so the same mounts in
// another order show the tool something else there. Covering can widen (a writable parent over a
// read-only .git) and so can uncovering (a writable bind no longer under a tmpfs): either is wider.
void compare_mount_order(Comparison& out, const Spec& a, const Spec& b) {
  const auto before = mount_places(a), after = mount_places(b);
  for (const auto& [outer, outer_before] : before) {
    const auto outer_after = after.find(outer);
    if (outer_after == after.end()) continue;
    for (const auto& [inner, inner_before] : before) {
      const auto inner_after = after.find(inner);
      if (!below(inner, outer) || inner_after == after.end()) continue;
      const bool covered_before = outer_before > inner_before;
      const bool covered_after = outer_after->second > inner_after->second;
      if (covered_before == covered_after) continue;
      const auto order = [&](bool covered) {
        return covered ? nlohmann::json::array({inner, outer})
                       : nlohmann::json::array({outer, inner});
      };
      out.add("mounts.order", Widening::wider, order(covered_before), order(covered_after),
              covered_after
                  ? fmt::format("{} now goes on after {} and covers it", outer, inner)
                  : fmt::format("{} now goes on after {}: no longer covered by it", inner, outer));
    }
  }
}

void compare_mounts(Comparison& out, const Spec& a, const Spec& b) {
  const auto before = mounts_by_target(a), after = mounts_by_target(b);
  std::map<std::string, bool> targets;
  for (const auto& [target, mount] : before) targets[target] = true;
  for (const auto& [target, mount] : after) targets[target] = true;
  for (const auto& [target, unused] : targets) {
    const std::string field = "mounts[" + target + "]";
    const auto was = before.find(target), is = after.find(target);
    Verdict verdict;
    if (was == before.end()) {
      // --protect: the same host files, read-only now where a writable bind showed them.
      const Mount* above = writable_bind_above(before, target);
      if (is->second.kind == MountKind::ro_bind && above != nullptr &&
          is->second.source ==
              target_key(above->source) + target.substr(target_key(above->target).size())) {
        verdict.narrowed("kept read-only inside the writable bind of " + above->source);
        out.add(field, verdict, nullptr, mount_json(is->second));
        continue;
      }
      verdict.widened(fmt::format("a new {}", is->second.kind == MountKind::bind
                                                  ? "writable bind"
                                                  : mount_kind_name(is->second.kind)));
      out.add(field, verdict, nullptr, mount_json(is->second));
      continue;
    }
    if (is == after.end()) {
      // A read-only bind inside a writable one (--protect) kept that part from the tool's writes.
      const Mount* above = writable_bind_above(after, target);
      if (was->second.kind == MountKind::ro_bind && above != nullptr) {
        verdict.widened("now writable through the bind of " + above->source);
      } else {
        verdict.narrowed("gone");
      }
      out.add(field, verdict, mount_json(was->second), nullptr);
      continue;
    }
    if (mount_json(was->second) == mount_json(is->second)) continue;
    out.add(field, compare_mount(was->second, is->second), mount_json(was->second),
            mount_json(is->second));
  }
  compare_mount_order(out, a, b);
  out.openings("unmask", a.unmask, b.unmask);
  out.limit("tmp_size", std::optional(a.tmp_size_bytes), std::optional(b.tmp_size_bytes));
  out.changed("rootfs", a.rootfs ? nlohmann::json(*a.rootfs) : nlohmann::json(nullptr),
              b.rootfs ? nlohmann::json(*b.rootfs) : nlohmann::json(nullptr));
  out.changed("cwd", a.cwd, b.cwd);
  if (a.dry_run.has_value() != b.dry_run.has_value()) {
    // Without a dry run, the tool's writes reach the host's files at once.
    out.add("dry_run", a.dry_run ? Widening::wider : Widening::narrower, a.dry_run.has_value(),
            b.dry_run.has_value(),
            a.dry_run ? "writes reach the host directly" : "writes wait for `jail commit`");
  } else if (a.dry_run && b.dry_run) {
    out.limit("dry_run.size", a.dry_run->size_bytes, b.dry_run->size_bytes);
    out.changed("dry_run.session_dir", a.dry_run->sessions_dir, b.dry_run->sessions_dir);
  }
}

// A resource's rlimit as the tool gets it, and where it comes from when no --rlimit entry set it.
struct RlimitInRun {
  rlim_t soft = RLIM_INFINITY, hard = RLIM_INFINITY;
  std::string unset;  // empty: an --rlimit entry set it
};

std::string why_jail_sets(const Limits& limits, int resource) {
  switch (resource) {
    case RLIMIT_CPU:
      if (limits.cpu_time) return "from cpu-time";
      break;
    case RLIMIT_FSIZE:
      if (limits.max_file_size) return "from max-file-size";
      break;
    case RLIMIT_NOFILE:
      if (limits.max_open_files) return "from max-open-files";
      break;
    case RLIMIT_CORE:
      return "jail's default (no core dumps)";
    case RLIMIT_MSGQUEUE:
      return "jail's default (a quarter of the caller's)";
    default:
      break;
  }
  return "set by jail";
}

// Not set is not unlimited: jail sets some itself, and the tool inherits the rest from its caller
// (here `jail diff`'s caller, who is taken to be the one who runs the profiles).
RlimitInRun rlimit_in_run(const Limits& limits, int resource) {
  const bool entry = std::any_of(limits.rlimits.begin(), limits.rlimits.end(),
                                 [&](const Rlimit& r) { return r.resource == resource; });
  if (const std::optional<Rlimit> set = rlimit_jail_sets(limits, resource)) {
    return {set->soft, set->hard, entry ? "" : why_jail_sets(limits, resource)};
  }
  rlimit own{RLIM_INFINITY, RLIM_INFINITY};
  if (::getrlimit(resource, &own) != 0) own = {RLIM_INFINITY, RLIM_INFINITY};
  return {own.rlim_cur, own.rlim_max, "the caller's, which the tool inherits"};
}

nlohmann::json rlimit_json(rlim_t value) {
  return value == RLIM_INFINITY ? nlohmann::json("unlimited") : nlohmann::json(value);
}

// Each resource an --rlimit entry of either run sets, soft and hard. The others are the same in
// both runs unless a flag of their own (cpu-time, core dumps, ...) differs, which says so itself.
void compare_rlimits(Comparison& out, const Limits& a, const Limits& b) {
  std::set<int> resources;
  for (const Rlimit& r : a.rlimits) resources.insert(r.resource);
  for (const Rlimit& r : b.rlimits) resources.insert(r.resource);
  for (const int resource : resources) {
    const RlimitInRun before = rlimit_in_run(a, resource), after = rlimit_in_run(b, resource);
    for (const bool hard : {false, true}) {
      const rlim_t x = hard ? before.hard : before.soft, y = hard ? after.hard : after.soft;
      if (x == y) continue;
      std::vector<std::string> why;
      if (!before.unset.empty()) why.push_back("before: not set, " + before.unset);
      if (!after.unset.empty()) why.push_back("after: not set, " + after.unset);
      why.emplace_back(y > x ? "a larger limit" : "a smaller limit");  // unlimited is the largest
      out.add(fmt::format("limits.rlimits[{}].{}", rlimit_name(resource), hard ? "hard" : "soft"),
              y > x ? Widening::wider : Widening::narrower, rlimit_json(x), rlimit_json(y),
              fmt::format("{}", fmt::join(why, "; ")));
    }
  }
}

void compare_limits(Comparison& out, const Spec& a, const Spec& b) {
  const Limits &x = a.limits, &y = b.limits;
  out.limit("limits.memory", x.memory_bytes, y.memory_bytes);
  out.limit("limits.pids", x.pids, y.pids);
  out.limit("limits.cpus", x.cpus, y.cpus);
  const auto ms = [](const auto& value) {
    return value ? std::optional<std::int64_t>(
                       std::chrono::duration_cast<std::chrono::milliseconds>(*value).count())
                 : std::nullopt;
  };
  out.limit("limits.timeout_ms", ms(x.timeout), ms(y.timeout));
  out.limit("limits.kill_grace_ms", std::optional(x.kill_grace.count()),
            std::optional(y.kill_grace.count()));
  out.limit("limits.cpu_time_ms", ms(x.cpu_time), ms(y.cpu_time));
  out.limit("limits.max_file_size", x.max_file_size, y.max_file_size);
  out.limit("limits.max_open_files", x.max_open_files, y.max_open_files);
  compare_rlimits(out, x, y);
  out.opening("limits.core_dumps", x.core_dumps, y.core_dumps, "core dumps");
  out.limit("max_output", a.max_output_bytes, b.max_output_bytes);
  out.changed("cgroup_parent",
              a.cgroup_parent ? nlohmann::json(*a.cgroup_parent) : nlohmann::json(nullptr),
              b.cgroup_parent ? nlohmann::json(*b.cgroup_parent) : nlohmann::json(nullptr));
}

// The policies' decisions, as `jail policy diff` compares them; `none` is no filter at all.
void compare_policy(Comparison& out, const std::string& a, const std::string& b) {
  if (a == b) return;
  if (a == kNoPolicy || b == kNoPolicy) {
    out.add("policy", b == kNoPolicy ? Widening::wider : Widening::narrower, a, b,
            b == kNoPolicy ? "no seccomp filter at all" : "a seccomp filter where there was none");
    return;
  }
  policy::LoadResult before = policy::try_load_policy(a);
  policy::LoadResult after = policy::try_load_policy(b);
  if (!before.policy || !after.policy) {
    throw PolicyLoadFailure(policy::format(before.diagnostics) + policy::format(after.diagnostics));
  }
  const policy::PolicyDiff d = policy::diff(*before.policy, *after.policy);
  const std::string how = fmt::format("jail policy diff {} {} lists the syscalls", a, b);
  if (d.wider()) {
    out.add("policy", Widening::wider, a, b,
            (d.narrower() ? "mixed: wider for some syscalls, narrower for others; " : "") + how);
  } else if (d.narrower()) {
    out.add("policy", Widening::narrower, a, b, how);
  } else {
    out.add("policy", Widening::changed, a, b,
            d.empty() ? "the same decisions for every syscall" : how);
  }
}

void compare_runtime(Comparison& out, const RunOptions& a, const RunOptions& b) {
  // gVisor's user-space kernel stands between the tool and the host's: native is the wider.
  const auto runtime_rank = [](Runtime r) { return r == Runtime::runsc ? 0 : 1; };
  out.ranked("runtime", runtime_rank(a.spec.runtime), runtime_rank(b.spec.runtime),
             runtime_name(a.spec.runtime), runtime_name(b.spec.runtime));
  out.changed("runsc_platform", a.spec.runsc_platform, b.spec.runsc_platform);
  out.changed("stdio", stdio_name(a.spec.stdio), stdio_name(b.spec.stdio));
  out.changed("tty_always", a.tty_always, b.tty_always);
  const auto input_rank = [](Input i) { return i == Input::none ? 0 : 1; };
  out.ranked("input", input_rank(a.spec.input), input_rank(b.spec.input), input_name(a.spec.input),
             input_name(b.spec.input));
  compare_policy(out, a.spec.policy, b.spec.policy);
  out.changed("trace_timing", a.spec.trace_timing, b.spec.trace_timing);
}

void compare_reports(Comparison& out, const RunOptions& a, const RunOptions& b) {
  const auto json = [](const std::optional<std::string>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  out.changed("audit_log", json(a.audit_log), json(b.audit_log));
  out.changed("status_file", json(a.status_file), json(b.status_file));
  out.changed("log.verbosity", a.log.verbosity, b.log.verbosity);
  out.changed("log.quiet", a.log.quiet, b.log.quiet);
  out.changed("log.file", a.log.file, b.log.file);
  out.changed("log.format", a.log.format == LogFormat::json ? "json" : "text",
              b.log.format == LogFormat::json ? "json" : "text");
}

}  // namespace

std::vector<RunChange> compare_runs(const RunOptions& before, const RunOptions& after) {
  Comparison out;
  compare_identity(out, before.spec, after.spec);
  compare_network(out, before.spec, after.spec);
  compare_mounts(out, before.spec, after.spec);
  compare_limits(out, before.spec, after.spec);
  compare_runtime(out, before, after);
  compare_reports(out, before, after);
  return out.take();
}

}  // namespace jail::runner
