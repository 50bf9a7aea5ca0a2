#include "session_audit.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "jail/byte_text.hpp"
#include "jail/error.hpp"
#include "open_output.hpp"

namespace jail::runner {
namespace {

std::string utc_now() {
  const std::time_t seconds =
      std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm parts{};
  ::gmtime_r(&seconds, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

// One write under an exclusive lock on an O_APPEND fd: concurrent writers never tear a line.
bool append_line(int fd, const std::string& line) {
  ::flock(fd, LOCK_EX);
  const ssize_t written = ::write(fd, line.data(), line.size());
  ::flock(fd, LOCK_UN);
  return written == static_cast<ssize_t>(line.size());
}

}  // namespace

SessionAudit::SessionAudit(const std::optional<std::string>& path) {
  if (!path) return;
  path_ = *path;
  fd_ = open_output(path_, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    const int err = errno;
    throw Error("audit", err,
                fmt::format("cannot open --audit-log {}: {}{}; nothing was done", path_,
                            std::strerror(err), open_output_hint(err)));
  }
}

SessionAudit::~SessionAudit() {
  if (fd_ >= 0) ::close(fd_);
}

void SessionAudit::record(const std::string& event, const std::string& session_dir,
                          const nlohmann::json& details, const std::string& error, bool history) {
  nlohmann::json line = {{"schema", kSchema},
                         {"time", utc_now()},
                         {"event", event},
                         {"session", session_dir.substr(session_dir.rfind('/') + 1)},
                         {"dir", text_json(session_dir)},
                         {"caller_uid", ::getuid()},
                         {"caller_pid", ::getpid()},
                         {"outcome", error.empty() ? "done" : "refused"},
                         {"error", error.empty() ? nlohmann::json() : nlohmann::json(error)}};
  if (details.is_object()) line.update(details);
  const std::string text =
      line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (fd_ >= 0 && !append_line(fd_, text)) {
    spdlog::error("cannot append to --audit-log {}: {}", path_, std::strerror(errno));
  }
  if (!history) return;
  const std::string own = session_dir + "/history.jsonl";
  const int fd = ::open(own.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;  // the session is gone (or never was): --audit-log has the line
  if (!append_line(fd, text)) spdlog::error("cannot append to {}: {}", own, std::strerror(errno));
  ::close(fd);
}

}  // namespace jail::runner
