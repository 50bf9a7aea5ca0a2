// Host side: the first request a tool sends its proxy (CONNECT or an absolute-form http://
// request), and the head the proxy sends upstream in place of a plain-HTTP one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "egress/request_target.hpp"

namespace jail::egress {

constexpr std::size_t kMaxHeadBytes = 16 * 1024;

enum class RequestKind { connect, plain_http };

struct RequestHead {
  RequestKind kind = RequestKind::connect;
  std::string method;
  Authority authority;
  std::string upstream_head;  // plain_http: origin-form request line, hop-by-hop headers gone
  std::size_t size = 0;       // bytes of the head; what follows is body or tunnel data
};

struct HeadReading {
  enum class Status { complete, need_more, refused } status = Status::need_more;
  RequestHead head;     // when complete
  std::string problem;  // when refused: what is wrong with the request, for the tool and report
};

// Reads the head at the start of `bytes` (everything received so far).
[[nodiscard]] HeadReading read_request_head(std::string_view bytes);

}  // namespace jail::egress
