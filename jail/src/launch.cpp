// Parent side of starting a jail: check the Spec, prepare the child's plan, clone3 into every
// namespace, write the id maps, release the child. Everything that can fail with a sentence fails
// here, before the child exists.
#include "jail/launch.hpp"

#include <fcntl.h>
#include <linux/sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "bind_sources.hpp"
#include "egress_proxy.hpp"
#include "log.hpp"
#include "output_capture.hpp"

#include "child/caller_memory.hpp"
#include "child/exec.hpp"
#include "child/plan.hpp"
#include "jail/error.hpp"
#include "landlock_ruleset.hpp"
#include "process_state.hpp"
#include "rlimits.hpp"
#include "root_layout.hpp"
#include "runsc/sandbox.hpp"
#include "seccomp/allowed_sockets.hpp"
#include "seccomp/connect_broker.hpp"
#include "seccomp/exit_watch.hpp"
#include "seccomp/landlock_rules.hpp"
#include "seccomp/lookup_policy.hpp"
#include "seccomp/prepare.hpp"
#include "seccomp/reroute.hpp"
#include "seccomp/signal_check.hpp"
#include "seccomp/write_watch.hpp"
#include "spawn_support.hpp"
#include "spec_check.hpp"
#include "user_quotas.hpp"
#include "userns_probe.hpp"

namespace jail {
namespace {

// The staging directory only has to exist on the host; inside the child's private mount
// namespace the new root is mounted over it, so the host's own /tmp is never touched.
constexpr const char* kStagingDir = "/tmp";
constexpr std::uint64_t kRootTmpfsBytes = 1ull << 20;

int read_cap_last_cap() {
  std::ifstream file("/proc/sys/kernel/cap_last_cap");
  int value = 0;
  if (file >> value) return value;
  // Unknown: drop every capability number the kernel could have (PR_CAPBSET_DROP of an unknown
  // one fails with EINVAL, which is then reported — fail closed).
  return 63;
}

// Where this process's argv and environ strings are (fields 48-51 of /proc/self/stat), so the
// child can wipe its copies of them.
void locate_caller_strings(child::Plan& plan) {
  std::ifstream stat("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto after_name = text.rfind(')');
  if (after_name == std::string::npos) return;
  std::istringstream fields(text.substr(after_name + 2));
  std::vector<std::string> tokens;  // tokens[0] is field 3 (the state)
  for (std::string token; fields >> token;) tokens.push_back(token);
  if (tokens.size() < 49) return;
  const auto field = [&](std::size_t number) { return std::stoull(tokens[number - 3]); };
  const auto arg_start = field(48), arg_end = field(49), env_start = field(50), env_end = field(51);
  if (arg_end > arg_start) {
    plan.caller_args = reinterpret_cast<char*>(arg_start);
    plan.caller_args_len = arg_end - arg_start;
  }
  if (env_end > env_start) {
    plan.caller_env = reinterpret_cast<char*>(env_start);
    plan.caller_env_len = env_end - env_start;
  }
}

struct PtyPlan {
  bool enabled = false;
  unsigned fds = 0;  // which of the tool's 0/1/2 get the slave
  int input = -1;    // the caller's fd relayed into the pty
  int output = STDOUT_FILENO;
};

// The tool gets the pty on the stdio fds that are terminals here (a redirected stdout stays a
// file, written directly); if none is a terminal, on all three, relayed to stdin and stdout.
PtyPlan plan_pty(const Spec& spec) {
  PtyPlan plan;
  if (spec.stdio != Stdio::pty) return plan;
  plan.enabled = true;
  for (int fd = 0; fd <= 2; ++fd) {
    if (::isatty(fd)) plan.fds |= 1u << fd;
  }
  if (plan.fds == 0) plan.fds = 0b111;
  if ((plan.fds & 1u) != 0) plan.input = STDIN_FILENO;
  for (const int fd : {STDOUT_FILENO, STDERR_FILENO, STDIN_FILENO}) {
    if ((plan.fds & (1u << fd)) != 0) {
      plan.output = fd;
      break;
    }
  }
  return plan;
}

// The current directory inside the jail when a read-only bind shows it there (jail's default for
// the caller's directory) and the tool's writes there would fail with EROFS; not in a dry run,
// where it is a writable layer.
std::optional<std::string> read_only_cwd(const Spec& spec) {
  if (spec.dry_run) return std::nullopt;
  const std::string cwd = normalize_jail_path(spec.cwd);
  for (const Mount& mount : spec.mounts) {
    if (mount.kind == MountKind::ro_bind && normalize_jail_path(mount.target) == cwd && cwd != "/")
      return cwd;
  }
  return std::nullopt;
}

// What the connect broker lets the tool reach beyond the jail's own sockets; a root caller's
// connects are made as the tool's own host ids (an unprivileged caller's tool is the caller).
SocketAccess socket_access(const Spec& spec, const Identity& identity, bool landlock) {
  SocketAccess access;
  access.allowed_sockets = pin_allowed_sockets(spec);
  access.allowed_abstract = spec.allow_abstract;
  access.own_network = !landlock && spec.net == Net::none;
  access.landlock = landlock;
  access.net_none = spec.net == Net::none;
  if (::geteuid() == 0) access.connect_as = HostIds{identity.host_uid, identity.host_gid};
  return access;
}

// The broker makes every connect with the tool's socket, taken with pidfd_getfd. Where an outer
// seccomp profile refuses that (Docker's, without CAP_SYS_PTRACE), a run that asks for connects
// to succeed fails here, saying why, rather than with each one refused; without such a flag the
// tool meets the refusals --net none gives it anyway, each reported.
void check_connects_can_be_made(const Spec& spec) {
  const bool asked =
      spec.net == Net::host || !spec.allow_sockets.empty() || !spec.allow_abstract.empty();
  const int err = asked ? descriptors_untakeable() : 0;
  if (err == 0) return;
  const std::string flag = spec.net == Net::host         ? "--net host"
                           : !spec.allow_sockets.empty() ? "--allow-socket"
                                                         : "--allow-abstract";
  throw Error("connect_broker", err,
              fmt::format("cannot give the tool {}: jail makes the tool's connects itself, with "
                          "the tool's socket, and pidfd_getfd is refused here ({}): an outer "
                          "seccomp profile, as Docker's is to a container without "
                          "CAP_SYS_PTRACE (docker run --cap-add SYS_PTRACE lifts it); without "
                          "{} the tool runs, and its connects are refused",
                          flag, strerrorname_np(err), flag));
}

// Connects (always), path lookups (--trace-lookups), exits under an open-files limit and writes
// while the current directory is read-only reach the supervisor even where the policy allows
// them: it performs the connect itself, notes the path, counts the exiting process's
// descriptors, or notes a write that met EROFS. Compiles the filter; returns whether exits are
// routed.
bool route_to_supervisor(PreparedPolicy& policy, const Spec& spec, std::uint64_t start_envp,
                         bool writes, const LandlockRuleset* landlock) {
  const bool lookups = spec.lookups == LookupTrace::record;
  const bool exits = rlimit_in_force(spec.limits, RLIMIT_NOFILE).has_value();
  policy::Policy routed = with_connects_brokered(*policy.policy);
  if (landlock && !landlock->scopes_signals) routed = with_signals_checked(routed);
  if (landlock) add_landlock_gaps(routed, {spec.net == Net::none, landlock->abi});
  std::vector<std::string> what = {"connects"};
  if (lookups) {
    routed = with_lookups_traced(routed, start_envp);
    what.emplace_back("path lookups");
  }
  if (exits) {
    routed = with_exits_watched(routed, policy.name);
    what.emplace_back("exits");
  }
  if (writes) {
    routed = with_writes_watched(routed);
    what.emplace_back("writes");
  }
  compile_routed(policy, routed, fmt::format("{}", fmt::join(what, " and ")));
  return exits;
}

// Whether a failed clone means this caller may not make a user namespace here (a container's
// seccomp profile, user.max_user_namespaces = 0, clone3 refused), where the Landlock mode can
// run the tool instead.
bool user_namespaces_refused(const Error& error) {
  if (error.step() != "clone" || ::geteuid() == 0) return false;
  const int err = error.errno_value();
  return err == EPERM || err == ENOSPC || err == EINVAL || err == ENOSYS || err == EUSERS;
}

// clone3, or clone where clone3 is refused (ENOSYS: Docker's default profile) and nothing but
// clone can express the flags: the Landlock mode's, which make no namespace.
long clone_child(clone_args& args, bool landlock) {
  const long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid >= 0 || errno != ENOSYS || !landlock || (args.flags & CLONE_INTO_CGROUP) != 0) return pid;
  int* pidfd = reinterpret_cast<int*>(args.pidfd);
  return ::syscall(SYS_clone, args.flags, nullptr, pidfd, nullptr, 0);
}

std::string clone_failure_message(int err) {
  std::string text = fmt::format("cannot create the jail's namespaces (clone3): {}: {}",
                                 strerrorname_np(err), std::strerror(err));
  if (err == EPERM || err == ENOSPC || err == EUSERS) {
    text +=
        ": user namespaces are not available to this user here (see /proc/sys/user/"
        "max_user_namespaces and `jail doctor`)";
  } else if (err == ENOSYS) {
    text += ": the kernel is older than 5.3; jail needs clone3";
  }
  return text;
}

}  // namespace

// The native runtime, in namespaces or (`landlock`) in the Landlock mode.
Process launch_native(const Spec& spec, bool landlock) {
  Timeline timeline(spec.trace_timing);
  timeline.mark(child::Phase::launch);
  check_spec(spec);
  if (landlock) check_landlock_spec(spec);
  // A root caller's tool gets host ids no other jail and no user has, for as long as it runs.
  IdSlot id_slot = ::geteuid() == 0 && !landlock ? take_id_slot() : IdSlot();
  Identity identity =
      choose_identity(spec, ::geteuid(), ::getegid(),
                      id_slot.held() ? std::optional<uid_t>(id_slot.host_id()) : std::nullopt);
  // Through an idmapped bind the tool owns the caller's files; without a filter nothing keeps a
  // set-id bit off them (the baseline does that), so binds stay unmapped. A dry run's layers
  // stay idmapped: they are the caller's private session, and a commit drops set-id bits.
  if (spec.policy == kNoPolicy && spec.seccomp_mode != SeccompMode::learn) {
    identity.idmap_binds = false;
  }

  std::unique_ptr<dry_run::Recorder> recorder =
      spec.dry_run ? dry_run::Recorder::begin(spec) : nullptr;
  PlanBuilder builder;
  // The Landlock mode's tool writes its temporary files in a directory of its own (TMPDIR),
  // confined by the ruleset instead of a root of mounts.
  // Named for this jail's pid: a jail SIGKILLed before it could remove it leaves a name that
  // says whose it was, and the next one removes it.
  if (landlock) remove_stale_private_tmps();
  TempDir private_tmp = landlock ? TempDir(fmt::format("jail-tmp-{}", ::getpid())) : TempDir();
  LandlockRuleset ruleset =
      landlock ? make_landlock_ruleset(spec, private_tmp.path().string()) : LandlockRuleset{};
  if (landlock) {
    jail::log().info("the tool runs in the Landlock mode (ABI {}{}): no namespaces; TMPDIR {}",
                     ruleset.abi,
                     ruleset.scopes_signals ? "" : ", its signals checked by the supervisor",
                     private_tmp.path().string());
  }
  const std::vector<std::string> masked =
      landlock ? ruleset.masked : add_root_layout(builder, spec, identity, recorder.get());
  for (const std::string& path : masked) jail::log().info("masked the credential store {}", path);
  builder.set_argv(spec.argv);
  const bool egress = !spec.net_allow.empty();
  std::vector<std::string> env =
      landlock ? with_private_tmp(spec.env, private_tmp.path().string()) : spec.env;
  builder.set_envp(egress ? with_egress_proxy(std::move(env)) : env);
  builder.set_rlimits(rlimits_for(spec.limits));
  // Per user namespace: the Landlock mode has none of its own to set them in.
  const std::vector<std::pair<std::string, std::string>> quotas =
      landlock ? std::vector<std::pair<std::string, std::string>>{} : jail_quotas();
  builder.set_quotas(quotas);
  child::Plan& plan = builder.finish();
  plan.rootfs_dir = spec.rootfs ? builder.keep(*spec.rootfs) : nullptr;
  plan.root_tmpfs_size = builder.keep(std::to_string(kRootTmpfsBytes));
  plan.staging_dir = kStagingDir;
  if (recorder && recorder->store_size())
    plan.layer_store_size = builder.keep(std::to_string(*recorder->store_size()));
  plan.hostname = builder.keep(spec.hostname);
  plan.hostname_len = spec.hostname.size();
  plan.new_net = !landlock && spec.net == Net::none;
  plan.egress_listener = egress;
  plan.landlock = landlock;
  plan.landlock_ruleset_fd = ruleset.fd.get();
  plan.cwd = builder.keep(normalize_jail_path(spec.cwd));
  plan.uid = identity.uid;
  plan.gid = identity.gid;
  plan.may_setgroups = !identity.deny_setgroups;
  plan.cap_last_cap = read_cap_last_cap();
  locate_caller_strings(plan);
  plan.trace_timing = spec.trace_timing;
  timeline.mark(child::Phase::spec_checked);

  // Loaded and compiled before clone; the child gets a copy of the program with its memory.
  const std::unique_ptr<PreparedPolicy> policy = spec.seccomp_mode == SeccompMode::learn
                                                     ? prepare_learning_policy()
                                                     : load_policy_for_run(spec.policy);
  // The tool's own start passes plan.envp to execve: the address is the same in the child (a
  // copy of this process), which lets the filter tell that execve from the tool's own.
  // Writes there are watched only under a filter, which is what sends them to the supervisor.
  const std::optional<std::string> watched_cwd = policy ? read_only_cwd(spec) : std::nullopt;
  if (policy) {
    check_connects_can_be_made(spec);
    plan.exits_watched =
        route_to_supervisor(*policy, spec, reinterpret_cast<std::uint64_t>(plan.envp),
                            watched_cwd.has_value(), landlock ? &ruleset : nullptr);
  }
  plan.seccomp_program = policy ? &policy->fprog : nullptr;
  plan.scope_abstract_sockets = landlock
                                    ? ruleset.scopes_abstract_sockets
                                    : landlock_abi_in_use() >= child::kLandlockAbiAbstractScope;
  timeline.mark(child::Phase::policy_compiled);
  const PtyPlan pty = plan_pty(spec);
  plan.pty = pty.enabled;
  plan.pty_fds = pty.fds;

  // The tool's ends of its stdio, when they are not the caller's own; closed here after clone.
  auto state = std::make_unique<Process::State>();
  std::array<UniqueFd, 3> child_stdio = plumb_stdio(spec, *state);
  for (int fd = 0; fd <= 2; ++fd) plan.stdio_fds[fd] = child_stdio[fd].get();

  Pipe go = make_pipe("the handshake pipe");
  Pipe report = make_report_socket();
  plan.go_fd = go.read.get();
  plan.report_fd = report.write.get();

  state->context =
      FailureContext{builder.descriptions(),
                     spec.argv.front(),
                     plan.path_env != nullptr ? plan.path_env : child::kPathWithoutPathVariable,
                     normalize_jail_path(spec.cwd),
                     spec.rootfs.value_or(""),
                     identity};
  // With the caller's rights, before the child exists: it only attaches them.
  UniqueFd layer_store;
  const std::vector<UniqueFd> bind_sources = open_bind_sources(plan, state->context, layer_store);
  if (layer_store.valid()) recorder->take_store(std::move(layer_store));
  state->id_slot = std::move(id_slot);
  state->masked = masked;
  state->read_only_cwd = watched_cwd;
  state->abstract_sockets_scoped = plan.scope_abstract_sockets;
  if (policy) state->sockets = socket_access(spec, identity, landlock);
  state->isolation = landlock ? "landlock" : "namespaces";
  if (egress) {
    // Found before clone: a missing helper is a setup error, not a tool whose connects hang.
    state->egress = EgressConfig{find_egress_helper(spec.egress_helper), spec.net_allow,
                                 spec.net_allow_private, std::nullopt};
    if (::geteuid() == 0) state->egress->run_as = {identity.host_uid, identity.host_gid};
  }
  state->landlock = landlock;
  state->signals_checked = landlock && !ruleset.scopes_signals;
  state->private_tmp = std::move(private_tmp);
  for (const auto& [path, value] : quotas)
    state->quotas.emplace_back(path.substr(path.rfind('/') + 1), std::stoull(value));
  if (const auto msgqueue = rlimit_in_force(spec.limits, RLIMIT_MSGQUEUE))
    state->quotas.emplace_back("RLIMIT_MSGQUEUE", msgqueue->soft);
  state->forward_signals = spec.forward_signals;
  state->policy = policy ? policy->policy : nullptr;
  state->learn = spec.seccomp_mode == SeccompMode::learn;
  state->lookups = spec.lookups;
  state->jail_mounts = {"/proc", "/dev", "/tmp"};
  for (const Mount& mount : spec.mounts) {
    state->jail_mounts.push_back(normalize_jail_path(mount.target));
  }
  state->pty = pty.enabled;
  state->pty_input = pty.input;
  state->pty_output = pty.output;
  state->pty_has_stdout = (pty.fds & (1u << STDOUT_FILENO)) != 0;
  state->limits = spec.limits;
  state->dry_run = std::move(recorder);
  state->cgroup = make_cgroup(spec);
  // v1: the child joins by itself, first thing after the go byte (child/init.cpp).
  std::vector<UniqueFd> cgroup_tasks = state->cgroup.open_v1_tasks();
  if (cgroup_tasks.size() > child::Plan::kMaxCgroupTasks) {
    throw Error("cgroup attach", E2BIG,
                fmt::format("the jail's cgroup spans {} v1 hierarchies; at most {} are supported",
                            cgroup_tasks.size(), child::Plan::kMaxCgroupTasks));
  }
  for (std::size_t i = 0; i < cgroup_tasks.size(); ++i)
    plan.cgroup_tasks_fds[i] = cgroup_tasks[i].get();
  plan.cgroup_tasks_count = cgroup_tasks.size();
  timeline.mark(child::Phase::cgroup_created);

  clone_args args{};
  args.flags = landlock
                   ? CLONE_PIDFD
                   : CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
                         CLONE_NEWCGROUP | CLONE_PIDFD | (spec.net == Net::none ? CLONE_NEWNET : 0);
  int pidfd = -1;
  args.pidfd = reinterpret_cast<std::uint64_t>(&pidfd);
  // No SIGCHLD: a host that reaps its children with waitpid(-1) (a SIGCHLD handler, a child
  // watcher) or ignores SIGCHLD would take this one's status from the supervisor; it is waited
  // for through its pidfd and with __WALL only.
  args.exit_signal = 0;
  clone_into(args, state->cgroup);
  child::learn_caller_heap_start();

  state->started = std::chrono::steady_clock::now();
  const long pid = clone_child(args, landlock);
  if (pid == 0) child::run(plan);  // never returns
  if (pid < 0) {
    const int err = errno;
    throw Error("clone", err, clone_failure_message(err));
  }
  timeline.mark(child::Phase::cloned);
  state->pid = static_cast<pid_t>(pid);
  state->pidfd.reset(pidfd);
  go.read.reset();
  report.write.reset();
  for (auto& fd : child_stdio) fd.reset();
  cgroup_tasks.clear();

  try {
    // v2 without CLONE_INTO_CGROUP: placed while it still waits for the go byte, before it can
    // run anything. v1: it joins by itself (above).
    if (plan.cgroup_tasks_count == 0) state->cgroup.attach(state->pid);
    if (!landlock) write_id_maps(state->pid, identity);
    timeline.mark(child::Phase::id_maps_written);
  } catch (...) {
    kill_and_reap(state->pidfd.get(), state->pid);
    throw;
  }
  const char go_byte = 1;
  if (::write(go.write.get(), &go_byte, 1) != 1) {
    const int err = errno;
    kill_and_reap(state->pidfd.get(), state->pid);
    throw Error("handshake", err,
                fmt::format("cannot release the jail's init: {}", std::strerror(err)));
  }
  jail::log().debug("jail init is host pid {}; tool runs as {}:{} inside ({}:{} on the host)",
                    state->pid, identity.uid, identity.gid, identity.host_uid, identity.host_gid);
  state->timeline = std::move(timeline);
  state->go_write = std::move(go.write);
  state->reports = ReportChannel(std::move(report.read));
  return Process(std::move(state));
}

Process launch(const Spec& spec) {
  if (spec.runtime == Runtime::runsc) return launch_runsc(spec);
  switch (spec.isolation) {
    case Isolation::namespaces:
      return launch_native(spec, false);
    case Isolation::landlock:
      return launch_native(spec, true);
    case Isolation::automatic:
      break;
  }
  if (::geteuid() != 0 && userns_cannot_mount()) {
    jail::log().info(
        "user namespaces here hold no capability (Ubuntu's AppArmor restriction): running the "
        "tool in the Landlock mode (docs/landlock.md); loading /etc/apparmor.d/jail gives the "
        "full jail");
    return launch_native(spec, true);
  }
  try {
    return launch_native(spec, false);
  } catch (const Error& error) {
    if (!user_namespaces_refused(error)) throw;
    jail::log().info(
        "this caller may not make a user namespace here ({} {}): running the tool in the "
        "Landlock mode instead (docs/landlock.md)",
        error.step(), strerrorname_np(error.errno_value()));
    return launch_native(spec, true);
  }
}

Result run(const Spec& spec, const RunOutput& output) {
  try {
    Process process = launch(spec);
    if (spec.stdio != Stdio::pipe) return process.wait();
    process.close_stdin();
    Captured captured = drain_output(process, output);
    Result result = process.wait();
    result.stdout_bytes = std::move(captured.out.bytes);
    result.stderr_bytes = std::move(captured.err.bytes);
    result.stdout_truncated = captured.out.truncated;
    result.stderr_truncated = captured.err.truncated;
    return result;
  } catch (const Error& error) {
    Result result;
    result.outcome = Outcome::setup_error;
    result.error = SetupFailure{error.step(), error.errno_value(), error.what()};
    return result;
  }
}

}  // namespace jail
