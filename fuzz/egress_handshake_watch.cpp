// libFuzzer target: jail-egress's watch on a tunnel's plaintext TLS handshake, and its reader of
// the server's first handshake message. Nothing crashes, a step never lets more through than it
// was given, and the same bytes fed in two pieces end as they do fed whole: the proxy decides on
// bytes as they arrive.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "egress/handshake_watch.hpp"
#include "egress/server_hello.hpp"

namespace {

using Status = jail::egress::HandshakeWatch::Step::Status;

void require(bool condition) {
  if (!condition) std::abort();
}

// Feeds `input` as a client would send it, the first `split` bytes first; the server's answer,
// when asked for, is `retry`.
jail::egress::HandshakeWatch::Step watch(std::string_view input, std::size_t split, bool retry) {
  jail::egress::HandshakeWatch watcher("api.example.com");
  std::size_t checked = 0;  // forwarded so far
  std::size_t arrived = split;
  while (true) {
    const std::string_view pending = input.substr(checked, arrived - checked);
    const auto step = watcher.feed(pending);
    require(step.checked <= pending.size());
    if (step.status == Status::name_mismatch) require(step.server_name.has_value());
    if (step.status == Status::malformed) require(!step.problem.empty());
    checked += step.checked;
    if (step.status == Status::needs_server) {
      watcher.server_answered(retry);
      continue;
    }
    if (step.status != Status::watching || arrived == input.size()) return step;
    arrived = input.size();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  (void)jail::egress::read_server_answer(input);
  const bool retry = size > 0 && (data[0] & 1) != 0;
  const auto whole = watch(input, size, retry);
  const auto pieces = watch(input, size / 2, retry);
  require(whole.status == pieces.status);
  require(whole.server_name == pieces.server_name);
  return 0;
}
