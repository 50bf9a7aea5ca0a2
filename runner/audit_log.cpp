#include "audit_log.hpp"

#include <fcntl.h>
#include <nettle/sha2.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "policy/policy.hpp"

namespace jail::runner {
namespace {

std::string sha256(const std::string& data) {
  sha256_ctx context;
  sha256_init(&context);
  sha256_update(&context, data.size(), reinterpret_cast<const std::uint8_t*>(data.data()));
  std::uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&context, sizeof digest, digest);
  std::string hex = "sha256:";
  for (const std::uint8_t byte : digest) hex += fmt::format("{:02x}", byte);
  return hex;
}

// Everything that decides what the tool can do, in a fixed order, so equal specs hash equal.
nlohmann::ordered_json spec_json(const Spec& spec) {
  nlohmann::ordered_json mounts = nlohmann::ordered_json::array();
  for (const auto& mount : spec.mounts) {
    mounts.push_back({{"kind", static_cast<int>(mount.kind)},
                      {"source", mount.source},
                      {"target", mount.target},
                      {"size", mount.size_bytes.value_or(0)}});
  }
  return {{"argv", spec.argv},
          {"env", spec.env},
          {"uid", spec.uid.value_or(static_cast<uid_t>(-1))},
          {"gid", spec.gid.value_or(static_cast<gid_t>(-1))},
          {"hostname", spec.hostname},
          {"net", spec.net == Net::host ? "host" : "none"},
          {"net_allow", spec.net_allow},
          {"net_allow_private", spec.net_allow_private},
          {"rootfs", spec.rootfs.value_or("")},
          {"cwd", spec.cwd},
          {"mounts", mounts},
          {"tmp_size", spec.tmp_size_bytes},
          {"policy", spec.policy},
          {"learn", spec.seccomp_mode == SeccompMode::learn},
          {"runtime", spec.runtime == Runtime::runsc ? "runsc" : "native"},
          // As asked: the mode that ran is the record's own "isolation".
          {"isolation", spec.isolation == Isolation::landlock     ? "landlock"
                        : spec.isolation == Isolation::namespaces ? "namespaces"
                                                                  : "auto"},
          {"memory", spec.limits.memory_bytes.value_or(0)},
          {"pids", spec.limits.pids.value_or(0)},
          {"cpus", spec.limits.cpus.value_or(0)},
          {"timeout_ms", spec.limits.timeout ? spec.limits.timeout->count() : 0}};
}

// Each mount as the tool saw it, and whether it could write there.
nlohmann::ordered_json mounts_json(const Spec& spec) {
  nlohmann::ordered_json mounts = nlohmann::ordered_json::array();
  for (const auto& mount : spec.mounts) {
    const char* kind = mount.kind == MountKind::bind      ? "bind"
                       : mount.kind == MountKind::ro_bind ? "ro_bind"
                                                          : "tmpfs";
    mounts.push_back({{"kind", kind},
                      {"source", mount.source},
                      {"target", mount.target},
                      {"writable", mount.kind != MountKind::ro_bind},
                      // --protect: a read-only part of a writable bind (mount_flags.cpp).
                      {"protected", mount.origin.starts_with("--protect ")}});
  }
  return mounts;
}

std::string policy_digest(const std::string& name) {
  if (name == "none") return "";
  try {
    const policy::Policy loaded = policy::load_policy(name);
    std::string all;
    for (const auto& source : loaded.sources) all += source.name + "\n" + source.text + "\n";
    return sha256(all);
  } catch (const std::exception&) {
    return "";  // the run itself reported why the policy could not be used
  }
}

std::string utc_time(std::chrono::system_clock::time_point now) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm parts{};
  ::gmtime_r(&seconds, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

}  // namespace

std::string audit_record(const Spec& spec, const Result& result) {
  const nlohmann::ordered_json spec_text = spec_json(spec);
  const auto now = std::chrono::system_clock::now();
  std::error_code error;
  const nlohmann::ordered_json status = nlohmann::ordered_json::parse(to_json(result));
  nlohmann::ordered_json record = {
      {"schema", kAuditSchema},
      {"time", utc_time(now)},
      {"caller_uid", ::getuid()},
      {"caller_pid", ::getpid()},
      {"command", spec.argv},
      {"cwd", std::filesystem::current_path(error).string()},
      {"spec_digest", sha256(spec_text.dump())},
      {"policy", spec.seccomp_mode == SeccompMode::learn ? "learn" : spec.policy},
      // A learning run applies no policy (it lets every call through and records it), so it has
      // no policy to name a digest of; spec.policy is only the unused default there.
      {"policy_digest",
       spec.seccomp_mode == SeccompMode::learn ? std::string() : policy_digest(spec.policy)},
      {"runtime", spec.runtime == Runtime::runsc ? "runsc" : "native"},
      // namespaces or landlock: what kept the tool in (docs/landlock.md).
      {"isolation", status["isolation"]},
      // What the tool could reach: a reviewer reads these without the spec.
      {"net", spec.net == Net::host    ? "host"
              : spec.net_allow.empty() ? "none"
                                       : "allow-list"},
      {"net_allow", spec.net_allow},
      {"connections", status["connections"]},
      {"mounts", mounts_json(spec)},
      {"masked", status["masked"]},
      {"dry_run", status["dry_run"]},
      {"limits", status["limits"]},
      {"outcome", status["outcome"]},
      {"exit_code", status["exit_code"]},
      {"signal", status["signal"]},
      {"jail_exit_code", status["jail_exit_code"]},
      {"violation", status["violation"]},
      {"denials", status["denials"]},
      {"limit_hit", status["limit_hit"]},
      {"wall_ms", result.wall_ms},
      {"cpu_user_ms", result.cpu_user_ms},
      {"cpu_sys_ms", result.cpu_sys_ms},
      {"peak_memory_bytes", result.peak_memory_bytes},
      {"error", status["error"]}};
  return record.dump() + "\n";
}

bool append_audit_record(int fd, const std::string& path, const Spec& spec, const Result& result) {
  const std::string line = audit_record(spec, result);
  // O_APPEND makes each write land at the end; the lock also keeps writers on filesystems
  // without atomic appends from interleaving.
  ::flock(fd, LOCK_EX);
  const ssize_t written = ::write(fd, line.data(), line.size());
  const int err = errno;
  ::flock(fd, LOCK_UN);
  if (written != static_cast<ssize_t>(line.size())) {
    spdlog::error("cannot append to --audit-log {}: {}", path, std::strerror(err));
    return false;
  }
  return true;
}

}  // namespace jail::runner
