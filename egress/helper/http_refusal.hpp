// Host side: the short HTTP answer a tool gets when the proxy refuses its request.
#pragma once

#include <string>
#include <string_view>

namespace jail::egress {

// A complete response: status line, a text body of `message` and a newline, Connection: close.
[[nodiscard]] std::string http_refusal(int status, std::string_view message);

}  // namespace jail::egress
