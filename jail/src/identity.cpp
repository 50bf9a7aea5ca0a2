#include "identity.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "jail/error.hpp"
#include "unique_fd.hpp"

namespace jail {
namespace {

constexpr uid_t kDefaultToolId = 1000;
constexpr uid_t kHostNobody = 65534;

void write_proc_file(pid_t pid, const char* name, const std::string& contents) {
  const std::string path = fmt::format("/proc/{}/{}", pid, name);
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid() || ::write(fd.get(), contents.data(), contents.size()) !=
                         static_cast<ssize_t>(contents.size())) {
    const int err = errno;
    throw Error("id_map", err,
                fmt::format("cannot write {} ({:?}): {}: {}", path, contents, strerrorname_np(err),
                            std::strerror(err)));
  }
}

}  // namespace

Identity choose_identity(const Spec& spec, uid_t caller_uid, gid_t caller_gid,
                         std::optional<uid_t> own_host_id) {
  Identity identity;
  if (caller_uid == 0) {
    identity.uid = spec.uid.value_or(kDefaultToolId);
    identity.gid = spec.gid.value_or(kDefaultToolId);
    identity.host_uid = own_host_id.value_or(kHostNobody);
    identity.host_gid = own_host_id.value_or(kHostNobody);
    // One id each way and nothing else: no host 0 (nor any other host id) in the namespace.
    identity.uid_map = fmt::format("{} {} 1\n", identity.uid, identity.host_uid);
    identity.gid_map = fmt::format("{} {} 1\n", identity.gid, identity.host_gid);
    identity.idmap_binds = identity.idmap_layers = own_host_id.has_value();
  } else {
    identity.uid = spec.uid.value_or(caller_uid);
    identity.gid = spec.gid.value_or(caller_gid);
    identity.host_uid = caller_uid;
    identity.host_gid = caller_gid;
    identity.uid_map = fmt::format("{} {} 1\n", identity.uid, caller_uid);
    identity.gid_map = fmt::format("{} {} 1\n", identity.gid, caller_gid);
    identity.deny_setgroups = true;
  }
  identity.user_name = identity.uid == 0 ? "root" : "jail";
  return identity;
}

void write_id_maps(pid_t pid, const Identity& identity) {
  if (identity.deny_setgroups) write_proc_file(pid, "setgroups", "deny");
  write_proc_file(pid, "uid_map", identity.uid_map);
  write_proc_file(pid, "gid_map", identity.gid_map);
}

}  // namespace jail
