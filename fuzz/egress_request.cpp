// libFuzzer target: the first request a tool sends jail-egress (Boost.Beast's parser and the
// hand-written request-target readers behind it), and the target readers on raw input too, as
// Beast lets only some bytes reach them. Nothing crashes, and what is accepted is well-formed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "egress/request_head.hpp"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

void check_authority(const jail::egress::Authority& authority) {
  require(authority.port != 0);
  require(!authority.host.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  using jail::egress::HeadReading;
  const HeadReading reading = jail::egress::read_request_head(input);
  if (reading.status == HeadReading::Status::complete) {
    require(reading.head.size <= size);
    check_authority(reading.head.authority);
    if (reading.head.kind == jail::egress::RequestKind::plain_http) {
      require(reading.head.upstream_head.ends_with("Connection: close\r\n\r\n"));
      require(reading.head.upstream_head.find('/') != std::string::npos);
    }
  }
  if (reading.status == HeadReading::Status::refused) require(!reading.problem.empty());

  if (const auto authority = jail::egress::parse_authority_form(input)) check_authority(*authority);
  if (const auto absolute = jail::egress::parse_absolute_http(input)) {
    check_authority(absolute->authority);
    require(absolute->origin_target.starts_with('/'));
    require(absolute->origin_target.find('#') == std::string::npos);
  }
  return 0;
}
