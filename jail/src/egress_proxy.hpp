// Parent side: jail's egress proxy (Spec::net_allow, docs/egress.md). The jail's init listens at
// 127.0.0.1:3128 in the tool's own network and hands the listener out; here it goes to the helper
// jail-egress, a process of its own that serves it from the host side: never root (a root
// caller's runs as the jail's own host ids), under a seccomp filter of its own, parsing nothing of
// the tool's beyond a request's head and a TLS ClientHello. Jail reads what it reports, one JSON
// line per decision, and closes its end of the report socket when the jail ends: the helper then
// reports the connections still open and exits. If the helper dies, the listener dies with it
// and the tool's connects to it are refused: it fails closed.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jail/result.hpp"
#include "unique_fd.hpp"

namespace jail {

struct EgressConfig {
  std::string helper;  // the jail-egress executable
  std::vector<std::string> allow;
  bool allow_private = false;
  // A root caller's: the host ids the helper drops to before it reads anything of the tool's.
  std::optional<std::pair<uid_t, gid_t>> run_as;
};

// The helper for `spec_helper` (Spec::egress_helper): that path, or the installed one. Throws
// jail::Error (step "egress_proxy") when it is not an executable file.
[[nodiscard]] std::string find_egress_helper(const std::string& spec_helper);

// The tool's environment with the proxy variables set (replacing any it had), so that
// proxy-aware tools go through jail's proxy and leave their own loopback alone.
[[nodiscard]] std::vector<std::string> with_egress_proxy(std::vector<std::string> env);

class EgressProxy {
 public:
  // Starts the helper on `listener`. Throws jail::Error (step "egress_proxy").
  EgressProxy(UniqueFd listener, const EgressConfig& config);
  EgressProxy(const EgressProxy&) = delete;
  EgressProxy& operator=(const EgressProxy&) = delete;
  ~EgressProxy();

  // The report socket, for the supervisor's poll; -1 once it has ended.
  [[nodiscard]] int fd() const { return reports_.get(); }
  // Reads what the helper reported; a refusal is logged as it happens.
  void on_readable();
  // The jail has ended: the helper reports what is still open and exits; every connection.
  [[nodiscard]] std::vector<NetConnection> finish();

 private:
  void take_line(const std::string& line);
  void end_helper();
  [[nodiscard]] bool any_open() const;  // an allowed connection not yet reported closed

  UniqueFd reports_;
  UniqueFd pidfd_;
  pid_t pid_ = -1;
  std::string pending_;  // a line not yet ended
  std::vector<NetConnection> connections_;
  std::vector<long long> ids_;  // the helper's id of each entry of connections_
  std::vector<bool> closed_;    // per entry of connections_: its "closed" line came
  bool ended_early_logged_ = false;
};

}  // namespace jail
