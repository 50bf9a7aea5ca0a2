// libFuzzer target: jail-egress's TLS ClientHello reader. Nothing crashes, a complete hello's
// server name is never empty, and a shorter prefix of the same bytes never reads as another
// hello: the proxy decides on bytes as they arrive.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "egress/client_hello.hpp"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  using Status = jail::egress::HelloReading::Status;
  const auto whole = jail::egress::read_client_hello(input);
  if (whole.server_name) require(!whole.server_name->empty());
  if (whole.status == Status::malformed) require(!whole.problem.empty());
  if (size > 1 && whole.status == Status::complete) {
    const auto prefix = jail::egress::read_client_hello(input.substr(0, size / 2));
    require(prefix.status == Status::need_more ||
            (prefix.status == Status::complete && prefix.server_name == whole.server_name));
  }
  return 0;
}
