#include "oci/bundle.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "identity.hpp"
#include "jail/error.hpp"
#include "oci/command_runs.hpp"
#include "oci/host_side_binds.hpp"
#include "oci/rootfs_mount_points.hpp"
#include "oci/working_directory.hpp"
#include "plan_builder.hpp"
#include "rlimits.hpp"
#include "root_layout.hpp"
#include "runsc/policy_loader.hpp"
#include "spec_check.hpp"
#include "unique_fd.hpp"

namespace jail::oci {

// The same mounts a native run makes, from the same layout code, so the two back ends agree.
struct Layout {
  PlanBuilder builder;
  Identity identity;
};

namespace {

namespace fs = std::filesystem;

std::unique_ptr<Layout> native_layout(const Spec& spec) {
  auto layout = std::make_unique<Layout>();
  layout->identity = choose_identity(spec, ::geteuid(), ::getegid());
  add_root_layout(layout->builder, spec, layout->identity);
  layout->builder.finish();
  return layout;
}

bool under_dev(const std::string& target) {
  return jail_path_within(target, "/dev");
}

nlohmann::json mount_json(const child::MountOp& op, const OpDescription& description) {
  nlohmann::json options = nlohmann::json::array({"nosuid"});
  if (!op.allow_devices) options.push_back("nodev");
  if (!op.allow_exec) options.push_back("noexec");
  switch (op.kind) {
    case child::OpKind::bind:
      options.push_back("rbind");
      options.push_back(op.read_only ? "ro" : "rw");
      return {{"destination", description.target},
              {"type", "bind"},
              {"source", description.source},
              {"options", options}};
    case child::OpKind::tmpfs:
      options.push_back(fmt::format("size={}", op.tmpfs_size));
      options.push_back(fmt::format("mode={}", op.tmpfs_mode));
      return {{"destination", description.target},
              {"type", "tmpfs"},
              {"source", "tmpfs"},
              {"options", options}};
    case child::OpKind::proc:
      return {{"destination", description.target},
              {"type", "proc"},
              {"source", "proc"},
              {"options", options}};
    default:
      return nullptr;
  }
}

nlohmann::json rlimits_json(const Limits& limits) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& entry : rlimits_for(limits)) {
    list.push_back({{"type", rlimit_constant_name(entry.resource)},
                    {"hard", entry.hard},
                    {"soft", entry.soft}});
  }
  return list;
}

nlohmann::json resources_json(const Limits& limits) {
  nlohmann::json resources = nlohmann::json::object();
  if (limits.memory_bytes) {
    resources["memory"] = {{"limit", *limits.memory_bytes}, {"swap", *limits.memory_bytes}};
  }
  if (limits.pids) resources["pids"] = {{"limit", *limits.pids}};
  if (limits.cpus) {
    constexpr std::uint64_t period = 100'000;
    resources["cpu"] = {{"period", period},
                        {"quota", static_cast<std::int64_t>(*limits.cpus * period)}};
  }
  return resources;
}

void write_text(const fs::path& path, const char* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
  if (!out) {
    throw Error("bundle", errno,
                fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
  }
}

// The bundle's directory, made here and only its owner's (the environment in config.json may
// hold what --pass-env passed): one that already exists must be an empty directory, not a
// link. Written into as root, a directory someone had filled could lead its writes anywhere
// (a rootfs/etc/passwd that is a symlink to a host file), and one of an earlier export would be
// left half rewritten. true: made here; false: an empty one that was there.
bool make_bundle_directory(const fs::path& dir) {
  std::error_code error;
  fs::create_directories(dir.parent_path(), error);
  if (!error && ::mkdir(dir.c_str(), 0700) == 0) return true;
  const int err = error ? error.value() : errno;
  struct stat info {};
  if (err == EEXIST && ::lstat(dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    // One that cannot be read or made private is named with its own error, not "not empty".
    const bool empty = fs::is_empty(dir, error);
    if (error) {
      throw Error("bundle", error.value(),
                  fmt::format("cannot use {} for the bundle: cannot read it: {}", dir.string(),
                              error.message()));
    }
    if (empty) {
      if (::chmod(dir.c_str(), 0700) == 0) return false;
      throw Error("bundle", errno,
                  fmt::format("cannot use {} for the bundle: cannot make it its owner's alone "
                              "(chmod 0700): {}",
                              dir.string(), std::strerror(errno)));
    }
  }
  // Said as it is: "not an empty directory" read as wrong for a link to an empty one.
  const char* what = !S_ISDIR(info.st_mode) && !S_ISLNK(info.st_mode) ? "a file"
                     : S_ISLNK(info.st_mode) ? "a symlink (jail never writes a bundle through one)"
                                             : "a directory that is not empty";
  throw Error(
      "bundle", err,
      err == EEXIST
          ? fmt::format("cannot write the bundle in {}: it is {}; give a new or empty directory",
                        dir.string(), what)
          : fmt::format("cannot create bundle directory {}: {}", dir.string(), std::strerror(err)));
}

// Where a bind lands in the rootfs. What is at the same path already (a generated file an earlier
// op wrote, the mount point runsc's process made) is left as it is, never truncated: the mount
// hides it.
void make_mount_point(const fs::path& path, bool is_dir) {
  if (is_dir) {
    fs::create_directories(path);
    return;
  }
  const UniqueFd file(
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!file.valid() && errno != EEXIST) {
    throw Error(
        "bundle", errno,
        fmt::format("cannot create mount point {}: {}", path.string(), std::strerror(errno)));
  }
}

// The bundle's rootfs holds what a native run creates on its tmpfs root: mount points, links and
// the generated /etc files. Everything else comes in as mounts. A mount point of a bind that
// runsc's process makes may be there already (it makes its own as the native run does); one
// made here is left as it is.
void lay_out_rootfs(const Layout& layout, const fs::path& rootfs) {
  const child::Plan& plan = const_cast<PlanBuilder&>(layout.builder).plan();
  const auto& descriptions = layout.builder.descriptions();
  fs::create_directories(rootfs / "dev");  // the runtime's /dev tmpfs goes there (make_config)
  for (std::size_t i = 0; i < plan.op_count; ++i) {
    const child::MountOp& op = plan.ops[i];
    const std::string& target = descriptions[i].target;
    if (under_dev(target)) continue;
    const fs::path path = rootfs / op.target;
    fs::create_directories(path.parent_path());
    switch (op.kind) {
      case child::OpKind::symlink:
        fs::create_symlink(op.source, path);
        break;
      case child::OpKind::file:
        write_text(path, op.source, op.source_len);
        break;
      case child::OpKind::bind:
        make_mount_point(path, op.target_is_dir);
        break;
      default:
        fs::create_directories(path);
        break;
    }
  }
}

// `bound_by_runsc`: per op, whether runsc's process binds it (none when null); those are left out.
nlohmann::json config_for(const Layout& layout, const Spec& spec, const std::string& root_path,
                          const nlohmann::json& seccomp, const bool* bound_by_runsc = nullptr,
                          const std::optional<std::string>& loader_exec = std::nullopt) {
  const child::Plan& plan = const_cast<PlanBuilder&>(layout.builder).plan();
  const auto& descriptions = layout.builder.descriptions();

  // /dev is the runtime's own: a tmpfs it fills with the OCI default devices (null, zero, full,
  // random, urandom, tty, ptmx). runc and crun need the mount to have somewhere to put them
  // other than the bundle's own directory; runsc builds the same set either way.
  nlohmann::json mounts = nlohmann::json::array(
      {{{"destination", "/dev"},
        {"type", "tmpfs"},
        {"source", "tmpfs"},
        {"options", {"nosuid", "noexec", "strictatime", "mode=755", "size=65536k"}}}});
  for (std::size_t i = 0; i < plan.op_count; ++i) {
    const child::MountOp& op = plan.ops[i];
    // The native run's /dev entries are the runtime's (above); optional host entries that do
    // not exist here are left out, as the native run skips them.
    if (under_dev(descriptions[i].target)) continue;
    if (op.kind == child::OpKind::bind && op.optional && !fs::exists(descriptions[i].source))
      continue;
    if (bound_by_runsc != nullptr && bound_by_runsc[i]) continue;
    if (nlohmann::json mount = mount_json(op, descriptions[i]); !mount.is_null())
      mounts.push_back(mount);
  }

  nlohmann::json namespaces = nlohmann::json::array({{{"type", "pid"}},
                                                     {{"type", "ipc"}},
                                                     {{"type", "uts"}},
                                                     {{"type", "mount"}},
                                                     {{"type", "cgroup"}}});
  if (spec.net == Net::none) namespaces.push_back({{"type", "network"}});

  nlohmann::json args = spec.argv;
  if (loader_exec) {
    // jail's policy loader starts the command it found (runsc/policy_loader.hpp).
    args = nlohmann::json::array({kPolicyLoaderPath, kPolicyProgramPath, *loader_exec});
    for (const std::string& word : spec.argv) args.push_back(word);
  }
  nlohmann::json empty = nlohmann::json::array();
  nlohmann::json config = {
      {"ociVersion", "1.0.2"},
      {"process",
       {{"terminal", false},
        {"user", {{"uid", layout.identity.uid}, {"gid", layout.identity.gid}}},
        {"args", args},
        {"env", spec.env},
        {"cwd", spec.cwd},
        {"capabilities",
         {{"bounding", empty},
          {"effective", empty},
          {"inheritable", empty},
          {"permitted", empty},
          {"ambient", empty}}},
        {"rlimits", rlimits_json(spec.limits)},
        {"noNewPrivileges", true}}},
      {"root", {{"path", root_path}, {"readonly", true}}},
      {"hostname", spec.hostname},
      {"mounts", mounts},
      {"linux",
       {{"namespaces", namespaces},
        {"resources", resources_json(spec.limits)},
        {"maskedPaths", nlohmann::json::array({"/proc/kcore", "/proc/keys", "/proc/timer_list",
                                               "/proc/sched_debug", "/sys/firmware"})},
        {"readonlyPaths",
         nlohmann::json::array({"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"})}}}};
  if (!seccomp.is_null()) config["linux"]["seccomp"] = seccomp;
  return config;
}

// Whether a mount of the layout would hide the policy loader's directory.
bool mounts_over_loader(const std::vector<OpDescription>& descriptions) {
  return std::any_of(descriptions.begin(), descriptions.end(), [](const OpDescription& d) {
    return jail_path_within(d.target, std::string(kPolicyLoaderDirectory));
  });
}

// Everything in the bundle's directory: the rootfs, then config.json.
BundleFacts fill_bundle(const Layout& layout, const Spec& spec, const fs::path& dir,
                        const BundleSeccomp& seccomp, BundleUse use,
                        const bool* bound_by_runsc = nullptr) {
  std::string root_path = "rootfs";
  if (spec.rootfs) {
    root_path = *spec.rootfs;
    check_rootfs_mount_points(const_cast<PlanBuilder&>(layout.builder).plan(),
                              layout.builder.descriptions(), *spec.rootfs);
  } else {
    lay_out_rootfs(layout, dir / "rootfs");
  }
  const child::Plan& plan = const_cast<PlanBuilder&>(layout.builder).plan();
  const fs::path root = spec.rootfs ? fs::path(*spec.rootfs) : dir / "rootfs";
  const std::string cwd = normalize_jail_path(spec.cwd);
  check_working_directory(plan, layout.builder.descriptions(), root, cwd);
  check_mount_targets(plan, layout.builder.descriptions(), root, bound_by_runsc);
  BundleFacts facts;
  if (const std::string& command = spec.argv.front(); command.find('/') != std::string::npos) {
    // Not normalized: the walk takes "." and ".." as the jail would.
    facts.command_found = exists_in_jail(plan, layout.builder.descriptions(), root,
                                         command.starts_with('/') ? command : cwd + "/" + command);
  }
  // The policy: loaded inside the sandbox by jail's loader where the bundle can start the
  // command that way (BundleSeccomp::program), else handed to the runtime.
  std::optional<std::string> loader_exec;  // the command as the loader execs it
  if (seccomp.program != nullptr && use == BundleUse::run_once && !spec.rootfs &&
      !mounts_over_loader(layout.builder.descriptions())) {
    const std::string path_env = environment_value(spec.env, "PATH").value_or("");
    const CommandLookup lookup{plan,           layout.builder.descriptions(), root, cwd, path_env,
                               layout.identity};
    loader_exec = command_known_to_run(lookup, spec.argv.front());
    if (loader_exec) write_policy_loader(root, *seccomp.program);
    facts.policy_in_sandbox = loader_exec.has_value();
  }
  const nlohmann::json profile = !loader_exec && seccomp.profile ? seccomp.profile() : nullptr;
  // A policy given for the loader must reach the tool one way or the other.
  if (seccomp.program != nullptr && !loader_exec && profile.is_null()) {
    throw Error("policy", EINVAL,
                "the bundle would carry no seccomp policy: it cannot start the command through "
                "jail's policy loader, and no OCI profile was given; not written");
  }
  const nlohmann::json config =
      config_for(layout, spec, root_path, profile, bound_by_runsc, loader_exec);
  const std::string text = (use == BundleUse::kept ? config.dump(2) : config.dump()) + "\n";
  write_text(dir / "config.json", text.data(), text.size());
  return facts;
}

// Empties a bundle directory whose writing failed: nothing half written stays. One made here
// goes too; one that was there is left empty.
void remove_written(const fs::path& dir, bool made) {
  std::error_code ignored;
  for (const auto& entry : fs::directory_iterator(dir, ignored)) fs::remove_all(entry, ignored);
  if (made) fs::remove(dir, ignored);
}

}  // namespace

nlohmann::json make_config(const Spec& spec, const std::string& root_path,
                           const nlohmann::json& seccomp) {
  return config_for(*native_layout(spec), spec, root_path, seccomp);
}

fs::path run_bundle_parent() {
  if (const char* tmpdir = std::getenv("TMPDIR"); tmpdir != nullptr && *tmpdir != '\0') return {};
  struct statfs info {};
  if (::statfs("/dev/shm", &info) == 0 && info.f_type == TMPFS_MAGIC &&
      ::access("/dev/shm", W_OK | X_OK) == 0) {
    return "/dev/shm";
  }
  return {};
}

BundleFacts write_bundle(const Spec& spec, const fs::path& dir, const BundleSeccomp& seccomp,
                         BundleUse use) {
  if (use == BundleUse::run_once) return RunBundle(spec, dir).write(spec, seccomp);
  const bool made = make_bundle_directory(dir);
  try {
    return fill_bundle(*native_layout(spec), spec, dir, seccomp, use);
  } catch (...) {
    remove_written(dir, made);
    throw;
  }
}

RunBundle::RunBundle(const Spec& spec, fs::path dir) : dir_(std::move(dir)) {
  made_dir_ = make_bundle_directory(dir_);
  try {
    layout_ = native_layout(spec);
    const child::Plan& plan = const_cast<PlanBuilder&>(layout_->builder).plan();
    host_side_ = std::make_unique<bool[]>(plan.op_count);
    if (!spec.rootfs) {
      rootfs_ = (dir_ / "rootfs").string();
      fs::create_directory(rootfs_);
      const std::vector<bool> host_side = host_side_binds(plan, layout_->builder.descriptions());
      std::copy(host_side.begin(), host_side.end(), host_side_.get());
    }
  } catch (...) {
    remove_written(dir_, made_dir_);
    throw;
  }
}

RunBundle::~RunBundle() = default;

const std::vector<OpDescription>& RunBundle::descriptions() const {
  return layout_->builder.descriptions();
}

child::HostBinds RunBundle::host_binds() {
  if (rootfs_.empty()) return {};
  child::Plan& plan = layout_->builder.plan();
  return {.root_dir = rootfs_.c_str(),
          .ops = plan.ops,
          .host_side = host_side_.get(),
          .op_count = plan.op_count};
}

BundleFacts RunBundle::write(const Spec& spec, const BundleSeccomp& seccomp) {
  try {
    return fill_bundle(*layout_, spec, dir_, seccomp, BundleUse::run_once, host_side_.get());
  } catch (...) {
    remove_written(dir_, made_dir_);
    throw;
  }
}

}  // namespace jail::oci
