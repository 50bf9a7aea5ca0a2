// Host side: the accept loop, the connection bound and the watch on jail's end of the report.
#include "acceptor.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <ctime>
#include <thread>

#include "http_refusal.hpp"

namespace jail::egress {

namespace {

std::atomic<int> active_connections{0};

// Jail closing its end means the run is over: every connection ends with the process, after
// what the ones still open have moved is reported (jail reads on until the helper's end closes).
void exit_if_jail_gone(const pollfd& watched, Report& report) {
  if (watched.revents == 0) return;
  char ignored[256];
  const ssize_t got = recv(watched.fd, ignored, sizeof ignored, MSG_DONTWAIT);
  if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR) ||
      (watched.revents & (POLLHUP | POLLERR)) != 0) {
    report.end_of_run();
    _exit(0);
  }
}

void refuse_busy(UniqueFd client, std::uint64_t id, Report& report) {
  const std::string detail = "too many connections at once (" + std::to_string(kMaxConnections) +
                             "); retry when some have ended";
  Decision decision;
  decision.id = id;
  decision.refusal = Reason::too_many_connections;
  decision.detail = detail;
  report.connection(decision);
  const std::string response = http_refusal(503, "jail: " + detail);
  (void)send(client.get(), response.data(), response.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

void start_connection(UniqueFd client, std::uint64_t id, const ProxyRules& rules, Report& report) {
  if (active_connections.load() >= kMaxConnections) {
    refuse_busy(std::move(client), id, report);
    return;
  }
  ++active_connections;
  try {
    std::thread([client = std::move(client), id, &rules, &report]() mutable {
      // One connection out of memory or threads ends that connection, not the proxy.
      try {
        serve_connection(std::move(client), id, rules, report);
      } catch (const std::exception&) {
      }
      --active_connections;
    }).detach();
  } catch (const std::system_error&) {
    --active_connections;  // the client went with the lambda; it sees its connection close
  }
}

}  // namespace

void serve_until_jail_goes(int listen_fd, int report_fd, const ProxyRules& rules, Report& report) {
  std::uint64_t next_id = 1;
  while (true) {
    pollfd watched[2] = {{report_fd, POLLIN, 0}, {listen_fd, POLLIN, 0}};
    if (poll(watched, 2, -1) < 0) {
      if (errno == EINTR) continue;
      _exit(125);
    }
    exit_if_jail_gone(watched[0], report);
    if (watched[1].revents == 0) continue;
    UniqueFd client(accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC));
    if (!client.valid()) {
      // Out of descriptors: wait a little for connections to end instead of spinning.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        const timespec pause{0, 50'000'000};
        nanosleep(&pause, nullptr);
      }
      continue;
    }
    start_connection(std::move(client), next_id++, rules, report);
  }
}

}  // namespace jail::egress
