// Host side: the request head, parsed by Boost.Beast's HTTP parser; only the target is ours.
#include "egress/request_head.hpp"

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <set>

namespace jail::egress {

namespace http = boost::beast::http;

namespace {

using Request = http::request<http::empty_body>;

std::string_view view(boost::beast::string_view text) {
  return {text.data(), text.size()};
}

HeadReading refused(std::string problem) {
  HeadReading reading;
  reading.status = HeadReading::Status::refused;
  reading.problem = std::move(problem);
  return reading;
}

std::string lower(std::string_view text) {
  std::string result(text);
  for (char& c : result) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return result;
}

// Connection options name further hop-by-hop headers (RFC 9110 7.6.1); they end here too.
void add_connection_options(std::string_view value, std::set<std::string>& dropped) {
  while (!value.empty()) {
    const auto comma = value.find(',');
    std::string_view token = value.substr(0, comma);
    while (!token.empty() && (token.front() == ' ' || token.front() == '\t'))
      token.remove_prefix(1);
    while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
    // The message's own framing is never hop-by-hop: dropped, the server would read the body
    // as the next request (a desync the tool could steer).
    const std::string name = lower(token);
    if (!name.empty() && name != "content-length" && name != "transfer-encoding")
      dropped.insert(name);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
}

std::string host_header(const Authority& authority) {
  if (authority.port != 80) return authority.text();
  const bool ipv6 = authority.address && authority.address->family == AF_INET6;
  return ipv6 ? "[" + authority.host + "]" : authority.host;
}

// The head for the origin server: origin-form target, Host from the URI (a Host header naming
// another site would reach it on a shared server), no hop-by-hop headers, Connection: close so
// a client reusing its proxy connection for another host reconnects.
std::string upstream_head(const Request& request, const AbsoluteTarget& target) {
  std::set<std::string> dropped = {"host", "connection", "proxy-connection", "proxy-authorization",
                                   "keep-alive"};
  for (const auto& field : request) {
    const std::string name = lower(view(field.name_string()));
    if (name == "connection" || name == "proxy-connection") {
      add_connection_options(view(field.value()), dropped);
    }
  }
  std::string head;
  head += view(request.method_string());
  head +=
      " " + target.origin_target + (request.version() == 10 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");
  head += "Host: " + host_header(target.authority) + "\r\n";
  for (const auto& field : request) {
    if (dropped.contains(lower(view(field.name_string())))) continue;
    head += view(field.name_string());
    head += ": ";
    head += view(field.value());
    head += "\r\n";
  }
  head += "Connection: close\r\n\r\n";
  return head;
}

}  // namespace

HeadReading read_request_head(std::string_view bytes) {
  http::request_parser<http::empty_body> parser;
  parser.header_limit(kMaxHeadBytes);
  parser.eager(false);
  boost::beast::error_code error;
  const std::size_t used = parser.put(boost::asio::buffer(bytes.data(), bytes.size()), error);
  if (error == http::error::need_more) {
    if (bytes.size() >= kMaxHeadBytes) {
      return refused("the request head is longer than " + std::to_string(kMaxHeadBytes) + " bytes");
    }
    return HeadReading{};
  }
  if (error == http::error::header_limit) {
    return refused("the request head is longer than " + std::to_string(kMaxHeadBytes) + " bytes");
  }
  if (error || !parser.is_header_done()) {
    return refused("the request is no HTTP/1.x request (" + error.message() + ")");
  }
  const Request& request = parser.get();
  const std::string_view target = view(request.target());
  HeadReading reading;
  reading.status = HeadReading::Status::complete;
  reading.head.method = std::string(view(request.method_string()));
  reading.head.size = used;
  if (request.method() == http::verb::connect) {
    const auto authority = parse_authority_form(target);
    if (!authority) return refused("CONNECT takes HOST:PORT, not \"" + std::string(target) + "\"");
    reading.head.kind = RequestKind::connect;
    reading.head.authority = *authority;
    return reading;
  }
  const auto absolute = parse_absolute_http(target);
  if (!absolute) {
    if (target.starts_with('/')) {
      return refused("\"" + std::string(target) +
                     "\" is no proxy request (an absolute http:// "
                     "URI or CONNECT is)");
    }
    return refused("\"" + std::string(target) +
                   "\" is no http://HOST[:PORT]/PATH target "
                   "(for https, the client sends CONNECT)");
  }
  reading.head.kind = RequestKind::plain_http;
  reading.head.authority = absolute->authority;
  reading.head.upstream_head = upstream_head(request, *absolute);
  return reading;
}

}  // namespace jail::egress
