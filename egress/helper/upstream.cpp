// Host side: resolving and connecting to the server a tool asked for.
#include "upstream.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "socket_io.hpp"

namespace jail::egress {

namespace {

std::optional<IpAddress> address_of(const addrinfo& info) {
  if (info.ai_family == AF_INET && info.ai_addrlen >= sizeof(sockaddr_in)) {
    return jail::egress::address_of(*reinterpret_cast<const sockaddr_in*>(info.ai_addr));
  }
  if (info.ai_family == AF_INET6 && info.ai_addrlen >= sizeof(sockaddr_in6)) {
    return jail::egress::address_of(*reinterpret_cast<const sockaddr_in6*>(info.ai_addr));
  }
  return std::nullopt;
}

socklen_t socket_address(const IpAddress& address, std::uint16_t port, sockaddr_storage& out) {
  std::memset(&out, 0, sizeof out);
  if (address.family == AF_INET) {
    auto& v4 = reinterpret_cast<sockaddr_in&>(out);
    v4.sin_family = AF_INET;
    v4.sin_port = htons(port);
    std::memcpy(&v4.sin_addr, address.bytes.data(), 4);
    return sizeof v4;
  }
  auto& v6 = reinterpret_cast<sockaddr_in6&>(out);
  v6.sin6_family = AF_INET6;
  v6.sin6_port = htons(port);
  std::memcpy(&v6.sin6_addr, address.bytes.data(), 16);
  return sizeof v6;
}

// A connected blocking socket, or an invalid one with errno set.
UniqueFd connect_one(const IpAddress& address, std::uint16_t port, Clock::time_point deadline) {
  UniqueFd socket(::socket(address.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!socket.valid()) return {};
  sockaddr_storage target;
  const socklen_t size = socket_address(address, port, target);
  if (connect(socket.get(), reinterpret_cast<const sockaddr*>(&target), size) != 0) {
    if (errno != EINPROGRESS) return {};
    const Wait waited = wait_for(socket.get(), POLLOUT, deadline);
    if (waited != Wait::ready) {
      errno = waited == Wait::timed_out ? ETIMEDOUT : errno;
      return {};
    }
    int error = 0;
    socklen_t error_size = sizeof error;
    if (getsockopt(socket.get(), SOL_SOCKET, SO_ERROR, &error, &error_size) != 0) return {};
    if (error != 0) {
      errno = error;
      return {};
    }
  }
  const int flags = fcntl(socket.get(), F_GETFL);
  if (flags < 0 || fcntl(socket.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) return {};
  return socket;
}

}  // namespace

Resolution resolve_permitted(const Authority& authority, const AllowList& allow_list,
                             PrivateRanges private_ranges) {
  Resolution resolution;
  const auto judge = [&](const IpAddress& address) {
    const auto refusal = refusal_of(address, authority.port, allow_list, private_ranges);
    if (!refusal) {
      resolution.permitted.push_back(address);
      return;
    }
    if (resolution.refused.empty())
      resolution.refused = to_string(address) + ": " + refusal->reason;
    resolution.private_refused |= !refusal_of(address, PrivateRanges::allowed);
  };
  if (authority.address) {
    judge(*authority.address);
    return resolution;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
  addrinfo* found = nullptr;
  if (const int error = getaddrinfo(authority.host.c_str(), nullptr, &hints, &found); error != 0) {
    resolution.error = error == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(error);
    return resolution;
  }
  const std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owner(found, freeaddrinfo);
  for (const addrinfo* info = found; info != nullptr; info = info->ai_next) {
    if (const auto address = address_of(*info)) judge(*address);
  }
  return resolution;
}

Connected connect_first(const std::vector<IpAddress>& addresses, std::uint16_t port,
                        std::chrono::milliseconds timeout) {
  Connected connected;
  const auto deadline = Clock::now() + timeout;
  for (const IpAddress& address : addresses) {
    connected.socket = connect_one(address, port, deadline);
    if (connected.socket.valid()) {
      connected.address = address;
      return connected;
    }
    connected.error = to_string(address) + ": " + std::strerror(errno);
    if (Clock::now() >= deadline) break;
  }
  return connected;
}

}  // namespace jail::egress
