// Test support: a network and mount namespace of the test process's own, where 192.0.2.1 is an
// address on `lo` and /etc/hosts says what the test wants. Both end with the test process.
#pragma once

#include <string>

namespace jail::egress::test {

constexpr const char* kOriginAddress = "192.0.2.1";

// Moves the calling (single-threaded) process into the namespaces; false with a reason in
// `why` when it cannot (not root).
[[nodiscard]] bool enter_test_network(const std::string& hosts_file, std::string& why);

}  // namespace jail::egress::test
