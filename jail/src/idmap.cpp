#include "idmap.hpp"

#include <fcntl.h>
#include <linux/sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "jail/error.hpp"

namespace jail {
namespace {

[[noreturn]] void idmap_failed(int err, const std::string& what) {
  throw Error("idmap", err,
              fmt::format("cannot make the id map for the jail's binds: {}: {}: {}", what,
                          strerrorname_np(err), std::strerror(err)));
}

void write_map(pid_t pid, const char* name, const std::string& map) {
  const std::string path = fmt::format("/proc/{}/{}", pid, name);
  const UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid() || ::write(fd.get(), map.data(), map.size()) != static_cast<ssize_t>(map.size()))
    idmap_failed(errno, "write " + path);
}

// A process that only holds a new user namespace open until `hold` reaches end of file, once the
// parent closes `release` (the holder closes its own copy first).
pid_t holder_of_new_namespace(int hold, int release) {
  clone_args args{};
  args.flags = CLONE_NEWUSER;
  args.exit_signal = 0;  // waited for by pid with __WALL: a host's waitpid(-1) cannot take it
  const long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) {
    // After clone in a process that may have other threads: system calls only.
    ::close(release);
    char byte;
    while (::read(hold, &byte, 1) < 0 && errno == EINTR) {
    }
    ::_exit(0);
  }
  if (pid < 0) idmap_failed(errno, "clone3(CLONE_NEWUSER)");
  return static_cast<pid_t>(pid);
}

}  // namespace

int IdmapNamespaces::for_owner(uid_t uid, gid_t gid) {
  const auto key = std::make_pair(uid, gid);
  if (const auto known = made_.find(key); known != made_.end()) return known->second.get();
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) idmap_failed(errno, "pipe");
  UniqueFd hold(pipe_fds[0]);
  UniqueFd release(pipe_fds[1]);
  const pid_t holder = holder_of_new_namespace(hold.get(), release.get());
  UniqueFd ns;
  try {
    write_map(holder, "uid_map", fmt::format("{} {} 1\n", uid, tool_host_id_));
    write_map(holder, "gid_map", fmt::format("{} {} 1\n", gid, tool_host_id_));
    ns.reset(::open(fmt::format("/proc/{}/ns/user", holder).c_str(), O_RDONLY | O_CLOEXEC));
    if (!ns.valid()) idmap_failed(errno, "open the namespace");
  } catch (...) {
    release.reset();
    ::waitpid(holder, nullptr, __WALL);
    throw;
  }
  release.reset();
  while (::waitpid(holder, nullptr, __WALL) < 0 && errno == EINTR) {
  }
  return made_.emplace(key, std::move(ns)).first->second.get();
}

}  // namespace jail
