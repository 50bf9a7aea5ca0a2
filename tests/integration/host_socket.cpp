#include "host_socket.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

namespace jail_test {

HostServer::HostServer(const std::string& path, int type) : type_(type) {
  fd_ = ::socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.data(), path.size());
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
  bound_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&address), length) == 0 &&
           (type == SOCK_DGRAM || ::listen(fd_, 64) == 0);
  // Owned as the directory it is in, as a user's own socket is: through a root caller's
  // idmapped bind a file of an unmapped owner cannot be written to, nor connected.
  if (bound_ && path.front() != '\0') {
    struct stat directory {};
    const std::string parent = path.substr(0, path.rfind('/'));
    ::chmod(path.c_str(), 0777);
    if (::stat(parent.c_str(), &directory) == 0)
      (void)::lchown(path.c_str(), directory.st_uid, directory.st_gid);
  }
}

HostServer::~HostServer() {
  if (fd_ >= 0) ::close(fd_);
}

int HostServer::reached(uid_t* peer_uid) {
  int count = 0;
  for (;;) {
    if (type_ == SOCK_DGRAM) {
      char byte;
      if (::recv(fd_, &byte, 1, MSG_DONTWAIT) < 0) return count;
    } else {
      const int connection = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (connection < 0) return count;
      ucred credentials{};
      socklen_t size = sizeof credentials;
      if (peer_uid != nullptr &&
          ::getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0) {
        *peer_uid = credentials.uid;
      }
      ::close(connection);
    }
    ++count;
  }
}

}  // namespace jail_test
