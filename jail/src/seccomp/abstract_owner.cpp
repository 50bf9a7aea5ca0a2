#include "seccomp/abstract_owner.hpp"

#include <dirent.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <fstream>
#include <optional>
#include <set>
#include <vector>

#include "unique_fd.hpp"

namespace jail {
namespace {

constexpr ino_t kNoSocket = 0;
// A jail of more processes than this is read no further: its later ones are not the jail's here.
constexpr std::size_t kMostProcesses = 4096;

struct Listener {
  ino_t inode = kNoSocket;
  uid_t uid = 0;
};

// The socket listening on the abstract `name`, from a sock_diag dump of the listening Unix
// sockets: inode kNoSocket when there is none, nullopt when the dump fails.
std::optional<Listener> listening_socket(const std::string& name) {
  const UniqueFd diag(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
  if (!diag.valid()) return std::nullopt;
  struct {
    nlmsghdr header;
    unix_diag_req request;
  } query{};
  query.header.nlmsg_len = sizeof query;
  query.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  query.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  query.request.sdiag_family = AF_UNIX;
  query.request.udiag_states = 1U << TCP_LISTEN;
  query.request.udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_UID;
  if (::send(diag.get(), &query, sizeof query, 0) != static_cast<ssize_t>(sizeof query))
    return std::nullopt;
  const std::string wanted = std::string(1, '\0') + name;
  std::vector<char> buffer(32768);
  Listener found;
  for (;;) {
    const ssize_t got = ::recv(diag.get(), buffer.data(), buffer.size(), 0);
    if (got <= 0) return std::nullopt;
    auto left = static_cast<int>(got);
    for (auto* message = reinterpret_cast<nlmsghdr*>(buffer.data()); NLMSG_OK(message, left);
         message = NLMSG_NEXT(message, left)) {
      if (message->nlmsg_type == NLMSG_DONE) return found;
      if (message->nlmsg_type == NLMSG_ERROR) return std::nullopt;
      const auto* socket = static_cast<const unix_diag_msg*>(NLMSG_DATA(message));
      auto attribute_bytes = static_cast<int>(message->nlmsg_len - NLMSG_LENGTH(sizeof *socket));
      bool named = false;
      uid_t uid = static_cast<uid_t>(-1);
      for (auto* attribute = reinterpret_cast<rtattr*>(const_cast<unix_diag_msg*>(socket) + 1);
           RTA_OK(attribute, attribute_bytes); attribute = RTA_NEXT(attribute, attribute_bytes)) {
        if (attribute->rta_type == UNIX_DIAG_NAME) {
          named = std::string(static_cast<const char*>(RTA_DATA(attribute)),
                              RTA_PAYLOAD(attribute)) == wanted;
        } else if (attribute->rta_type == UNIX_DIAG_UID && RTA_PAYLOAD(attribute) >= sizeof uid) {
          std::memcpy(&uid, RTA_DATA(attribute), sizeof uid);
        }
      }
      if (named) found = Listener{socket->udiag_ino, uid};
    }
  }
}

// The jail's processes: its init and, through /proc's children lists, everything below it (an
// orphan of the jail is the init's child again). At most `limit` of them.
std::vector<pid_t> jail_processes(pid_t init, std::size_t limit) {
  std::vector<pid_t> found;
  std::set<pid_t> seen;
  std::deque<pid_t> next = {init};
  while (!next.empty() && found.size() < limit) {
    const pid_t pid = next.front();
    next.pop_front();
    if (!seen.insert(pid).second) continue;
    found.push_back(pid);
    const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
    DIR* dir = ::opendir(tasks.c_str());
    if (dir == nullptr) continue;
    while (const dirent* entry = ::readdir(dir)) {
      if (entry->d_name[0] == '.') continue;
      std::ifstream children(tasks + "/" + entry->d_name + "/children");
      for (pid_t child; children >> child;) next.push_back(child);
    }
    ::closedir(dir);
  }
  return found;
}

bool holds_socket(pid_t pid, ino_t socket) {
  const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
  DIR* dir = ::opendir(fds.c_str());
  if (dir == nullptr) return false;
  const std::string wanted = "socket:[" + std::to_string(socket) + "]";
  std::array<char, 64> link{};
  bool held = false;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const ssize_t length = ::readlinkat(::dirfd(dir), entry->d_name, link.data(), link.size() - 1);
    if (length > 0 && std::string(link.data(), static_cast<std::size_t>(length)) == wanted) {
      held = true;
      break;
    }
  }
  ::closedir(dir);
  return held;
}

}  // namespace

bool is_jail_process(pid_t pid, uid_t uid, const JailMembers& jail) {
  if (jail.own_uid) return uid == *jail.own_uid;
  if (pid <= 0) return false;
  const std::vector<pid_t> members = jail_processes(jail.init, kMostProcesses);
  return std::find(members.begin(), members.end(), pid) != members.end();
}

AbstractHolder abstract_holder(const std::string& name, const JailMembers& jail) {
  const std::optional<Listener> socket = listening_socket(name);
  if (!socket) return AbstractHolder::other;
  if (socket->inode == kNoSocket) return AbstractHolder::nobody;
  if (jail.own_uid)
    return socket->uid == *jail.own_uid ? AbstractHolder::jail : AbstractHolder::other;
  for (const pid_t pid : jail_processes(jail.init, kMostProcesses)) {
    if (holds_socket(pid, socket->inode)) return AbstractHolder::jail;
  }
  return AbstractHolder::other;
}

}  // namespace jail
