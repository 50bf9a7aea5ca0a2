// Host side: both directions of a TLS tunnel in user space until the client's handshake is
// encrypted, then splice. The server's direction keeps flowing throughout: the
// HelloRetryRequest that a second ClientHello answers comes from it.
#include "tls_tunnel.hpp"

#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "egress/server_hello.hpp"
#include "relay.hpp"
#include "socket_io.hpp"

namespace jail::egress {

namespace {

constexpr std::size_t kMaxServerWatch = 16 * 1024 + 5;
constexpr auto kServerAnswerTimeout = std::chrono::seconds(30);

// Whether the server's first handshake message was a HelloRetryRequest, told by its direction's
// thread to the client's.
class ServerAnswerSignal {
 public:
  void set(bool retry_request) {
    {
      const std::lock_guard lock(mutex_);
      if (retry_request_) return;
      retry_request_ = retry_request;
    }
    changed_.notify_all();
  }
  [[nodiscard]] std::optional<bool> wait_until(Clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    changed_.wait_until(lock, deadline, [this] { return retry_request_.has_value(); });
    return retry_request_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<bool> retry_request_;
};

ssize_t receive(int fd, std::array<char, 16 * 1024>& buffer) {
  ssize_t got;
  do {
    got = recv(fd, buffer.data(), buffer.size(), 0);
  } while (got < 0 && errno == EINTR);
  return got;
}

// The server's first bytes, read and passed on until its first handshake message says whether it
// asks for a second ClientHello; spliced from there.
void watch_server(int upstream, int client, Traffic& traffic, ServerAnswerSignal& answer) {
  std::string seen;
  std::array<char, 16 * 1024> buffer;
  while (true) {
    const ssize_t got = receive(upstream, buffer);
    if (got <= 0) break;  // pump() sees the end or the failure again and passes it on
    const std::string_view chunk(buffer.data(), static_cast<std::size_t>(got));
    if (!send_all(client, chunk)) {
      shutdown(client, SHUT_RDWR);
      shutdown(upstream, SHUT_RDWR);
      break;
    }
    traffic.bytes_in += chunk.size();
    seen.append(chunk);
    const ServerAnswer verdict = read_server_answer(seen);
    if (verdict == ServerAnswer::retry_request) {
      answer.set(true);
      break;
    }
    if (verdict == ServerAnswer::other || seen.size() > kMaxServerWatch) break;
  }
  answer.set(false);  // no effect after true
  pump(upstream, client, traffic.bytes_in);
}

HandshakeWatch::Step refusal(std::string problem) {
  HandshakeWatch::Step step;
  step.status = HandshakeWatch::Step::Status::malformed;
  step.problem = std::move(problem);
  return step;
}

// The client's records, forwarded once checked, until the handshake is encrypted (nothing
// returned: the caller splices the rest) or a check refuses.
std::optional<HandshakeWatch::Step> watch_client(int client, int upstream, const std::string& host,
                                                 std::string pending, Traffic& traffic,
                                                 ServerAnswerSignal& answer) {
  using Status = HandshakeWatch::Step::Status;
  HandshakeWatch watch(host);
  std::array<char, 16 * 1024> buffer;
  while (true) {
    const HandshakeWatch::Step step = watch.feed(pending);
    if (!send_all(upstream, std::string_view(pending).substr(0, step.checked))) return {};
    traffic.bytes_out += step.checked;
    pending.erase(0, step.checked);
    switch (step.status) {
      case Status::name_mismatch:
      case Status::malformed:
        return step;
      case Status::done:
        return std::nullopt;
      case Status::needs_server: {
        const auto retry = answer.wait_until(Clock::now() + kServerAnswerTimeout);
        if (!retry) return refusal("the server did not answer the ClientHello");
        watch.server_answered(*retry);
        continue;
      }
      case Status::watching:
        break;
    }
    const ssize_t got = receive(client, buffer);
    if (got <= 0) {
      // The tool's end, passed on by pump(). A cut record is no message the server could act on.
      if (send_all(upstream, pending)) traffic.bytes_out += pending.size();
      return std::nullopt;
    }
    pending.append(buffer.data(), static_cast<std::size_t>(got));
  }
}

}  // namespace

std::optional<HandshakeWatch::Step> relay_tls(int client, int upstream, const std::string& host,
                                              std::string pending, Traffic& traffic) {
  ServerAnswerSignal answer;
  std::thread inbound([&] { watch_server(upstream, client, traffic, answer); });
  auto refused = watch_client(client, upstream, host, std::move(pending), traffic, answer);
  if (refused) {
    shutdown(client, SHUT_RDWR);
    shutdown(upstream, SHUT_RDWR);
  } else {
    pump(client, upstream, traffic.bytes_out);
  }
  inbound.join();
  return refused;
}

}  // namespace jail::egress
