// libFuzzer target: the OCI/Docker seccomp JSON importer. Arbitrary bytes either import or
// throw ImportError; whatever it imports is policy text the parser must accept.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "policy/oci.hpp"
#include "policy/policy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  std::string text;
  try {
    // A fixed kernel release keeps the run independent of the host.
    text = jail::policy::import_oci_seccomp(json, "fuzz.json", {"6.1.0", {}});
  } catch (const jail::policy::ImportError&) {
    return 0;
  }
  const auto result = jail::policy::try_parse_policy(text, "imported.policy", "/nonexistent");
  if (!result.policy) {
    std::fprintf(stderr, "the importer produced text the parser refuses:\n%s\n%s\n", text.c_str(),
                 jail::policy::format(result.diagnostics).c_str());
    std::abort();
  }
  return 0;
}
