// Host side: the splice loops of a connection, one a direction.
#include "relay.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "unique_fd.hpp"

namespace jail::egress {

namespace {

constexpr std::size_t kChunk = 1 << 20;

}  // namespace

void pump(int from, int to, std::atomic<std::uint64_t>& moved) {
  int pipe_ends[2];
  if (pipe2(pipe_ends, O_CLOEXEC) != 0) {
    shutdown(from, SHUT_RDWR);
    shutdown(to, SHUT_RDWR);
    return;
  }
  const UniqueFd read_end(pipe_ends[0]);
  const UniqueFd write_end(pipe_ends[1]);
  // 1 MiB halves the relay's CPU time against 256 KiB (docs/egress.md). Refused beyond
  // pipe-max-size or the user's pipe-user-pages-soft, which bounds the memory: no failure.
  (void)fcntl(write_end.get(), F_SETPIPE_SZ, static_cast<int>(kChunk));
  while (true) {
    const ssize_t in = splice(from, nullptr, write_end.get(), nullptr, kChunk, SPLICE_F_MOVE);
    if (in < 0 && errno == EINTR) continue;
    if (in == 0) {
      shutdown(to, SHUT_WR);
      return;
    }
    if (in < 0) break;
    ssize_t left = in;
    while (left > 0) {
      const ssize_t out = splice(read_end.get(), nullptr, to, nullptr,
                                 static_cast<std::size_t>(left), SPLICE_F_MOVE);
      if (out < 0 && errno == EINTR) continue;
      if (out <= 0) break;
      left -= out;
      moved += static_cast<std::uint64_t>(out);
    }
    if (left > 0) break;
  }
  shutdown(from, SHUT_RDWR);
  shutdown(to, SHUT_RDWR);
}

void relay(int client, int upstream, Traffic& traffic) {
  std::thread inbound([&] { pump(upstream, client, traffic.bytes_in); });
  pump(client, upstream, traffic.bytes_out);
  inbound.join();
}

}  // namespace jail::egress
