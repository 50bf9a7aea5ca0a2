// Host side: refusal responses.
#include "http_refusal.hpp"

namespace jail::egress {

namespace {

const char* status_text(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
  }
  return "Error";
}

}  // namespace

std::string http_refusal(int status, std::string_view message) {
  const std::string body = std::string(message) + "\n";
  return "HTTP/1.1 " + std::to_string(status) + " " + status_text(status) +
         "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

}  // namespace jail::egress
