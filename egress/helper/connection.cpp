// Host side: the decisions of one connection, in the order the tool's bytes arrive.
#include "connection.hpp"

#include <poll.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "egress/client_hello.hpp"
#include "egress/host_name.hpp"
#include "egress/request_head.hpp"
#include "http_refusal.hpp"
#include "relay.hpp"
#include "socket_io.hpp"
#include "tls_tunnel.hpp"
#include "upstream.hpp"

namespace jail::egress {

namespace {

constexpr auto kHeadTimeout = std::chrono::seconds(30);
constexpr auto kConnectTimeout = std::chrono::seconds(10);
constexpr auto kHelloTimeout = std::chrono::seconds(30);
constexpr std::string_view kHowToAsk =
    "send CONNECT HOST:PORT or an absolute http://HOST/ request (the tool's proxy is "
    "http://127.0.0.1:3128)";

class ConnectionRun {
 public:
  ConnectionRun(UniqueFd client, std::uint64_t id, const ProxyRules& rules, Report& report)
      : client_(std::move(client)), rules_(rules), report_(report) {
    decision_.id = id;
  }

  void run() {
    const auto head = read_head();
    if (!head) return;
    decision_.name = head->authority.host;
    decision_.port = head->authority.port;
    decision_.method = head->method;
    if (!allowed_by_list(head->authority)) return;
    upstream_ = open_upstream(head->authority);
    if (!upstream_.valid()) return;
    decision_.address = to_string(upstream_address_);
    report_.connection(decision_);
    OpenConnection open(report_, decision_.id);

    std::string pending = buffer_.substr(head->size);
    if (head->kind == RequestKind::connect) {
      if (!send_all(client_.get(), "HTTP/1.1 200 Connection established\r\n\r\n")) return;
      const Tunnel tunnel = first_hello(head->authority, pending);
      if (tunnel == Tunnel::refused) return;
      if (tunnel == Tunnel::tls) {
        const auto refused = relay_tls(client_.get(), upstream_.get(), head->authority.host,
                                       std::move(pending), open.traffic());
        if (refused) refuse_later_hello(head->authority, *refused);
        return;
      }
    } else {
      pending.insert(0, head->upstream_head);
    }
    if (send_all(upstream_.get(), pending)) {
      open.traffic().bytes_out += pending.size();
      relay(client_.get(), upstream_.get(), open.traffic());
    }
  }

 private:
  void refuse(Reason reason, int status, const std::string& detail) {
    decision_.refusal = reason;
    decision_.detail = detail;
    report_.connection(decision_);
    if (status != 0 && send_all(client_.get(), http_refusal(status, "jail: " + detail))) {
      finish_sending(client_.get());
    }
  }

  std::optional<RequestHead> read_head() {
    const auto deadline = Clock::now() + kHeadTimeout;
    while (true) {
      const std::size_t room = kMaxHeadBytes + 1 - std::min(buffer_.size(), kMaxHeadBytes);
      const ssize_t received = receive_into(client_.get(), buffer_, room, deadline);
      if (received <= 0) {
        const std::string why =
            received == 0 ? "the tool closed the connection" : std::string(std::strerror(errno));
        refuse(Reason::bad_request, received < 0 && errno == ETIMEDOUT ? 400 : 0,
               "no complete request head arrived (" + why + "); " + std::string(kHowToAsk));
        return std::nullopt;
      }
      HeadReading reading = read_request_head(buffer_);
      if (reading.status == HeadReading::Status::complete) return std::move(reading.head);
      if (reading.status == HeadReading::Status::refused) {
        refuse(Reason::bad_request, 400, reading.problem + "; " + std::string(kHowToAsk));
        return std::nullopt;
      }
    }
  }

  bool allowed_by_list(const Authority& authority) {
    const bool allowed = authority.address
                             ? rules_.allow_list.names_address(*authority.address, authority.port)
                             : rules_.allow_list.allows_name(authority.host, authority.port);
    if (!allowed) {
      refuse(Reason::not_in_allow_list, 403,
             authority.text() + " is not in the allow-list (--net-allow)");
    }
    return allowed;
  }

  UniqueFd open_upstream(const Authority& authority) {
    const Resolution resolution =
        resolve_permitted(authority, rules_.allow_list, rules_.private_ranges);
    if (!resolution.error.empty()) {
      refuse(Reason::resolve_failed, 502,
             "cannot resolve " + authority.host + ": " + resolution.error);
      return {};
    }
    if (resolution.permitted.empty()) {
      const std::string flag = resolution.private_refused
                                   ? "--allow-private, or name the address with --net-allow"
                                   : "name the address itself with --net-allow";
      refuse(Reason::address_refused, 403,
             authority.text() + " resolves only to refused addresses (" + resolution.refused +
                 "); to reach it anyway: " + flag);
      return {};
    }
    Connected connected = connect_first(resolution.permitted, authority.port, kConnectTimeout);
    if (!connected.socket.valid()) {
      refuse(Reason::connect_failed, 502,
             "cannot connect to " + authority.text() + " (" + connected.error + ")");
      return {};
    }
    upstream_address_ = connected.address;
    return std::move(connected.socket);
  }

  enum class Tunnel { refused, plain, tls };

  // The tunnel's first client bytes, if they start a TLS ClientHello, must name the CONNECT
  // host. `pending` gets every byte read. Refused: reported; both sides end.
  Tunnel first_hello(const Authority& authority, std::string& pending) {
    if (pending.empty() && !client_speaks_first()) return Tunnel::plain;
    const auto deadline = Clock::now() + kHelloTimeout;
    while (true) {
      const HelloReading hello = read_client_hello(pending);
      switch (hello.status) {
        case HelloReading::Status::not_tls:
          return Tunnel::plain;
        case HelloReading::Status::complete:
          return server_name_matches(authority, hello) ? Tunnel::tls : Tunnel::refused;
        case HelloReading::Status::malformed:
          refuse(Reason::bad_request, 0, "the TLS ClientHello is unreadable: " + hello.problem);
          return Tunnel::refused;
        case HelloReading::Status::need_more:
          break;
      }
      const ssize_t received =
          receive_into(client_.get(), pending, kMaxHelloBytes + 1 - pending.size(), deadline);
      if (received == 0 && pending.empty()) return Tunnel::plain;  // a half-close, passed on
      if (received <= 0) {
        refuse(Reason::bad_request, 0, "the TLS ClientHello did not arrive whole");
        return Tunnel::refused;
      }
    }
  }

  // A ClientHello after the first (one answering a HelloRetryRequest), refused by the watch.
  void refuse_later_hello(const Authority& authority, const HandshakeWatch::Step& step) {
    if (step.status != HandshakeWatch::Step::Status::name_mismatch) {
      refuse(Reason::bad_request, 0, "the TLS handshake is refused: " + step.problem);
      return;
    }
    decision_.sni = step.server_name;
    const std::string named =
        step.server_name->empty() ? "names no server" : "names \"" + *step.server_name + "\"";
    refuse(Reason::tls_sni_mismatch, 0,
           "a later TLS ClientHello " + named + ", not the CONNECT host " + authority.host +
               " (--net-allow the name the tool asks for)");
  }

  bool server_name_matches(const Authority& authority, const HelloReading& hello) {
    if (!hello.server_name) return true;
    if (normalize_host_name(*hello.server_name) == normalize_host_name(authority.host)) {
      return true;
    }
    decision_.sni = *hello.server_name;
    refuse(Reason::tls_sni_mismatch, 0,
           "the TLS server name \"" + *hello.server_name + "\" is not the CONNECT host " +
               authority.host + " (--net-allow the name the tool asks for)");
    return false;
  }

  // Whether the tool sends before the server does; a server-first protocol has no ClientHello
  // to read, and waiting for one would hang it.
  bool client_speaks_first() {
    std::array<pollfd, 2> watched{pollfd{client_.get(), POLLIN, 0},
                                  pollfd{upstream_.get(), POLLIN, 0}};
    while (poll(watched.data(), watched.size(), -1) < 0 && errno == EINTR) {
    }
    return watched[0].revents != 0 || watched[1].revents == 0;
  }

  UniqueFd client_;
  UniqueFd upstream_;
  const ProxyRules& rules_;
  Report& report_;
  Decision decision_;
  std::string buffer_;
  IpAddress upstream_address_;
};

}  // namespace

void serve_connection(UniqueFd client, std::uint64_t id, const ProxyRules& rules, Report& report) {
  ConnectionRun(std::move(client), id, rules, report).run();
}

}  // namespace jail::egress
