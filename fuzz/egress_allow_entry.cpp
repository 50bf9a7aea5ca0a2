// libFuzzer target: `--net-allow` entries (jail-egress's allow-list). Every input is an entry
// or an EntryError naming the text; an accepted entry has ports and matches what it names.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "egress/allow_list.hpp"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  try {
    const jail::egress::AllowEntry entry = jail::egress::parse_allow_entry(input);
    require(!entry.ports.empty());
    const jail::egress::AllowList list({entry});
    if (entry.kind == jail::egress::EntryKind::name) {
      require(list.allows_name(entry.name, entry.ports.front()));
    } else if (entry.kind == jail::egress::EntryKind::address_range) {
      require(list.names_address(entry.range.base, entry.ports.front()));
    }
  } catch (const jail::egress::EntryError& error) {
    require(std::string_view(error.what()).starts_with("--net-allow \""));
  }
  return 0;
}
