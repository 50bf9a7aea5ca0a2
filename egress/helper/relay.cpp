// Host side: the two splice loops of a connection, one of them on a thread of its own.
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

// What moves from `from` to `to` until `from` ends; on a failure both sockets are shut down so
// the other direction's blocked splice returns too.
std::uint64_t pump(int from, int to) {
  int pipe_ends[2];
  if (pipe2(pipe_ends, O_CLOEXEC) != 0) {
    shutdown(from, SHUT_RDWR);
    shutdown(to, SHUT_RDWR);
    return 0;
  }
  const UniqueFd read_end(pipe_ends[0]);
  const UniqueFd write_end(pipe_ends[1]);
  // 1 MiB halves the relay's CPU time against 256 KiB (docs/egress.md). Refused beyond
  // pipe-max-size or the user's pipe-user-pages-soft, which bounds the memory: no failure.
  (void)fcntl(write_end.get(), F_SETPIPE_SZ, static_cast<int>(kChunk));
  std::uint64_t moved = 0;
  while (true) {
    const ssize_t in = splice(from, nullptr, write_end.get(), nullptr, kChunk, SPLICE_F_MOVE);
    if (in < 0 && errno == EINTR) continue;
    if (in == 0) {
      shutdown(to, SHUT_WR);
      return moved;
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
  return moved;
}

}  // namespace

Transfer relay(int client, int upstream) {
  Transfer transfer;
  std::thread inbound([&] { transfer.bytes_in = pump(upstream, client); });
  transfer.bytes_out = pump(client, upstream);
  inbound.join();
  return transfer;
}

}  // namespace jail::egress
