// Host side: poll-bounded socket reads and complete writes.
#include "socket_io.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace jail::egress {

bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t sent = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(sent));
  }
  return true;
}

Wait wait_for(int fd, short events, Clock::time_point deadline) {
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Wait::timed_out;
    pollfd watched{fd, events, 0};
    const int ready = poll(&watched, 1, static_cast<int>(std::min<long long>(left, 60'000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return Wait::failed;
    if (ready > 0) return Wait::ready;
  }
}

ssize_t receive_into(int fd, std::string& buffer, std::size_t limit, Clock::time_point deadline) {
  const Wait waited = wait_for(fd, POLLIN, deadline);
  if (waited == Wait::timed_out) errno = ETIMEDOUT;
  if (waited != Wait::ready) return -1;
  const std::size_t old_size = buffer.size();
  buffer.resize(old_size + limit);
  ssize_t received;
  do {
    received = recv(fd, buffer.data() + old_size, limit, 0);
  } while (received < 0 && errno == EINTR);
  buffer.resize(old_size + static_cast<std::size_t>(std::max<ssize_t>(received, 0)));
  return received;
}

void finish_sending(int fd) {
  shutdown(fd, SHUT_WR);
  const auto deadline = Clock::now() + std::chrono::milliseconds(500);
  std::string discarded;
  for (std::size_t total = 0; total < 256 * 1024;) {
    discarded.clear();
    const ssize_t received = receive_into(fd, discarded, 64 * 1024, deadline);
    if (received <= 0) return;
    total += static_cast<std::size_t>(received);
  }
}

}  // namespace jail::egress
