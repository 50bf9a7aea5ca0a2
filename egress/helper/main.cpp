// Host side: jail-egress, the proxy behind `jail --net-allow`. Set-up as one sequence of steps:
// flags, identity, hardening, the resolver warmed, the filter, then "ready" and the accept loop.
#include <netdb.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

#include "acceptor.hpp"
#include "options.hpp"
#include "own_filter.hpp"
#include "privilege.hpp"
#include "report.hpp"
#include "setup_error.hpp"

namespace {

// The filter allows no new code to be mapped: NSS modules, the resolver's configuration and
// glibc's thread start-up are loaded now, while that is still possible.
void warm_up_before_filter() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
  addrinfo* found = nullptr;
  if (getaddrinfo("localhost", nullptr, &hints, &found) == 0) freeaddrinfo(found);
  std::thread([] {}).join();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace jail::egress;
  const pid_t parent = getppid();
  try {
    const Options options = parse_options(argc, argv);
    // Writes to a tool that has gone must fail with EPIPE, not kill the proxy.
    signal(SIGPIPE, SIG_IGN);
    drop_privileges(options);
    harden_process(parent);
    warm_up_before_filter();
    load_own_filter();
    const ProxyRules rules{AllowList(options.entries), options.private_ranges};
    Report report(options.report_fd);
    report.ready();
    serve_until_jail_goes(options.listen_fd, options.report_fd, rules, report);
  } catch (const std::exception& error) {  // SetupError, or a set-up step out of memory
    std::fprintf(stderr, "jail-egress: %s\n", error.what());
    return 125;
  }
}
