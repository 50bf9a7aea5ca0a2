#include "egress_proxy.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "child/plan.hpp"
#include "jail/byte_text.hpp"
#include "jail/error.hpp"
#include "log.hpp"

namespace jail {
namespace {

constexpr int kListenFd = 3;
constexpr int kReportFd = 4;
// How long the helper has to report the closes the tool's end caused, then (told to stop) to
// report what was still open (a server that never answers keeps its tunnel open) and exit.
constexpr std::chrono::milliseconds kClosesGrace{1000};
constexpr std::chrono::milliseconds kStopGrace{1000};

[[noreturn]] void fail(int err, const std::string& text) {
  throw Error("egress_proxy", err, text);
}

std::string proxy_url() {
  return fmt::format("http://127.0.0.1:{}", child::kEgressProxyPort);
}

void reap_helper(pid_t pid) {
  while (::waitpid(pid, nullptr, __WALL) < 0 && errno == EINTR) {
  }
}

}  // namespace

std::string find_egress_helper(const std::string& spec_helper) {
  const std::string path = spec_helper.empty() ? std::string(JAIL_EGRESS_INSTALLED) : spec_helper;
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) ||
      ::access(path.c_str(), X_OK) != 0) {
    const int err = errno != 0 ? errno : EACCES;
    fail(err, fmt::format("--net-allow needs jail's egress proxy, {}, which is not an executable "
                          "file here ({}); install jail with `cmake --install`, or name the "
                          "helper in Spec::egress_helper",
                          path, strerrorname_np(err)));
  }
  return path;
}

std::vector<std::string> with_egress_proxy(std::vector<std::string> env) {
  constexpr std::string_view kNames[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
                                         "NO_PROXY",   "no_proxy",    "ALL_PROXY",  "all_proxy"};
  std::erase_if(env, [&](const std::string& entry) {
    const std::string_view name = std::string_view(entry).substr(0, entry.find('='));
    return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
  });
  const std::string url = proxy_url();
  for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"})
    env.push_back(fmt::format("{}={}", name, url));
  // The tool's own loopback stays its own: a test server of the tool's is not proxied.
  for (const char* name : {"NO_PROXY", "no_proxy"})
    env.push_back(fmt::format("{}=localhost,127.0.0.1,::1", name));
  return env;
}

EgressProxy::EgressProxy(UniqueFd listener, const EgressConfig& config) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    fail(errno,
         fmt::format("cannot make the egress proxy's report socket: {}", std::strerror(errno)));
  reports_.reset(pair[0]);
  const UniqueFd helper_end(pair[1]);

  std::vector<std::string> args = {config.helper, "--listen-fd", std::to_string(kListenFd),
                                   "--report-fd", std::to_string(kReportFd)};
  if (config.run_as) {
    args.insert(args.end(), {"--uid", std::to_string(config.run_as->first), "--gid",
                             std::to_string(config.run_as->second)});
  }
  if (config.allow_private) args.emplace_back("--allow-private");
  for (const std::string& entry : config.allow) args.insert(args.end(), {"--allow", entry});
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  // No environment at all: nothing of the caller's (HOSTALIASES, RES_OPTIONS, LOCALDOMAIN)
  // steers the helper's resolver.
  char* envp[] = {nullptr};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, listener.get(), kListenFd);
  posix_spawn_file_actions_adddup2(&actions, helper_end.get(), kReportFd);
  posix_spawn_file_actions_addclosefrom_np(&actions, kReportFd + 1);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  // A session of its own: a ^C at the caller's terminal is the tool's to get, not the proxy's.
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID);
  const int err =
      ::posix_spawn(&pid_, config.helper.c_str(), &actions, &attributes, argv.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (err != 0) {
    pid_ = -1;
    fail(err,
         fmt::format("cannot start jail's egress proxy {}: {}", config.helper, std::strerror(err)));
  }
  const long pidfd = ::syscall(SYS_pidfd_open, pid_, 0);
  if (pidfd >= 0) pidfd_.reset(static_cast<int>(pidfd));
  jail::log().info("egress proxy started (host pid {}), the tool's HTTP_PROXY is {}; allowed: {}",
                   pid_, proxy_url(), fmt::join(config.allow, ", "));
}

EgressProxy::~EgressProxy() {
  end_helper();
}

void EgressProxy::end_helper() {
  if (pid_ < 0) return;
  if (pidfd_.valid()) {
    ::syscall(SYS_pidfd_send_signal, pidfd_.get(), SIGKILL, nullptr, 0);
  } else {
    ::kill(pid_, SIGKILL);
  }
  reap_helper(pid_);
  pid_ = -1;
}

void EgressProxy::on_readable() {
  char buffer[8192];
  const ssize_t n = ::read(reports_.get(), buffer, sizeof buffer);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    reports_.reset();
    if (!ended_early_logged_) {
      ended_early_logged_ = true;
      jail::log().error(
          "jail's egress proxy ended while the tool ran: its connects to {} are refused from "
          "now on",
          proxy_url());
    }
    return;
  }
  pending_.append(buffer, static_cast<std::size_t>(n));
  for (std::size_t end; (end = pending_.find('\n')) != std::string::npos;) {
    take_line(pending_.substr(0, end));
    pending_.erase(0, end + 1);
  }
}

void EgressProxy::take_line(const std::string& line) {
  const nlohmann::json event = nlohmann::json::parse(line, nullptr, false);
  if (!event.is_object()) {
    jail::log().error("jail's egress proxy reported a line that is not JSON: {}", printable(line));
    return;
  }
  const std::string kind = event.value("event", "");
  const long long id = event.value("id", -1LL);
  const auto known = std::find(ids_.begin(), ids_.end(), id);
  NetConnection* entry =
      known != ids_.end() ? &connections_[static_cast<std::size_t>(known - ids_.begin())] : nullptr;
  if (kind == "connection") {
    if (entry == nullptr) {
      ids_.push_back(id);
      entry = &connections_.emplace_back();
      closed_.push_back(false);
    }
    entry->name = event.value("name", "");
    entry->port = event.value("port", std::uint16_t{0});
    entry->method = event.value("method", "");
    entry->address = event.value("address", entry->address);
    entry->allowed = event.value("allowed", false);
    entry->reason = event.value("reason", "");
    entry->detail = event.value("detail", "");
    entry->sni = event.value("sni", entry->sni);
    // Every text here is the tool's to choose (a TLS server name is any bytes): printed so that
    // nothing it holds starts a line of its own or moves the terminal's cursor.
    if (!entry->allowed) {
      jail::log().warn("egress: refused {} {}:{} ({}){}", printable(entry->method),
                       printable(entry->name), entry->port, printable(entry->reason),
                       entry->detail.empty() ? "" : ": " + printable(entry->detail));
    } else {
      jail::log().info("egress: {} {}:{} via {}", printable(entry->method), printable(entry->name),
                       entry->port, printable(entry->address));
    }
  } else if (kind == "closed" && entry != nullptr) {
    closed_[static_cast<std::size_t>(entry - connections_.data())] = true;
    entry->bytes_out = event.value("bytes_out", std::uint64_t{0});
    entry->bytes_in = event.value("bytes_in", std::uint64_t{0});
    entry->open_at_end = event.value("open", false);
  }
}

bool EgressProxy::any_open() const {
  for (std::size_t i = 0; i < connections_.size(); ++i) {
    if (connections_[i].allowed && !closed_[i]) return true;
  }
  return false;
}

std::vector<NetConnection> EgressProxy::finish() {
  // The tool has gone, and with it its ends of every connection: the helper sees each close and
  // reports its byte counts. Those come first; then the helper is told to stop.
  ended_early_logged_ = true;  // its end is expected now
  auto give_up = std::chrono::steady_clock::now() + kClosesGrace;
  bool stopping = false;
  while (reports_.valid()) {
    if (!stopping && (!any_open() || std::chrono::steady_clock::now() >= give_up)) {
      // The helper then reports every connection still open with its counts so far ("open").
      ::shutdown(reports_.get(), SHUT_WR);
      stopping = true;
      give_up = std::chrono::steady_clock::now() + kStopGrace;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        give_up - std::chrono::steady_clock::now());
    if (left.count() <= 0 && stopping) break;
    pollfd entry{reports_.get(), POLLIN, 0};
    const int ready = ::poll(&entry, 1, static_cast<int>(std::max<long>(left.count(), 0)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    if (ready > 0) on_readable();
  }
  end_helper();
  return connections_;
}

}  // namespace jail
