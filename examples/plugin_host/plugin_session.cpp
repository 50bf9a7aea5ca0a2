#include "plugin_session.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>

namespace plugin_host {
namespace {

// A plugin is not trusted to end its lines: one longer than this ends the conversation instead
// of growing the host's memory.
constexpr std::size_t kMaxLineBytes = 1 << 20;

// How long one round waits for the plugin's output before it looks at the deadline again.
// (The jail's supervisor runs on a thread of the Process's own: it needs no turns from here.)
constexpr std::chrono::milliseconds kPollSlice{100};

// Appends what `fd` has now to `buffer`. False at end-of-file (or an error, which ends it too).
bool read_available(int fd, std::string& buffer) {
  std::array<char, 4096> chunk{};
  ssize_t n = 0;
  do {
    n = ::read(fd, chunk.data(), chunk.size());
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  buffer.append(chunk.data(), static_cast<std::size_t>(n));
  return true;
}

std::optional<std::string> take_line(std::string& buffer) {
  const auto newline = buffer.find('\n');
  if (newline == std::string::npos) return std::nullopt;
  std::string line = buffer.substr(0, newline);
  buffer.erase(0, newline + 1);
  return line;
}

}  // namespace

PluginSession::PluginSession(jail::Process& process) : process_(process) {
  // A plugin that has died must show up as a failed write, not kill the host.
  std::signal(SIGPIPE, SIG_IGN);
}

bool PluginSession::send(const nlohmann::json& request) {
  if (!process_.running()) {
    problem_ = "the plugin has ended";
    return false;
  }
  const std::string line = request.dump() + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(process_.stdin_fd(), line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      problem_ = "the plugin no longer reads its stdin";
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<nlohmann::json> PluginSession::receive(Clock::time_point deadline) {
  problem_.clear();
  for (;;) {
    if (auto line = take_line(stdout_buffer_)) {
      auto answer = nlohmann::json::parse(*line, nullptr, /*allow_exceptions=*/false);
      if (answer.is_discarded()) {
        problem_ = "the plugin wrote a line that is not JSON: " + line->substr(0, 200);
        return std::nullopt;
      }
      return answer;
    }
    if (stdout_buffer_.size() > kMaxLineBytes) {
      problem_ = "the plugin wrote more than 1 MiB without a newline";
      return std::nullopt;
    }
    if (stdout_closed_) {
      problem_ = "the plugin closed its stdout (it has ended)";
      return std::nullopt;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      problem_ = "the plugin did not answer in time";
      return std::nullopt;
    }
    pump(std::min(kPollSlice, std::chrono::ceil<std::chrono::milliseconds>(deadline - now)));
  }
}

jail::Result PluginSession::finish() {
  process_.close_stdin();
  // Every process of the jail dies with it, so both pipes reach end-of-file; a plugin that
  // ignores the end of its input meets the jail's timeout meanwhile.
  while (!stdout_closed_ || !stderr_closed_) pump(kPollSlice);
  jail::Result result = process_.wait();
  // Whatever the plugin said after the last request, and what is left of its stderr.
  while (auto line = take_line(stdout_buffer_)) std::printf("<- (unasked) %s\n", line->c_str());
  if (!stderr_buffer_.empty()) std::fprintf(stderr, "plugin stderr: %s\n", stderr_buffer_.c_str());
  return result;
}

void PluginSession::pump(std::chrono::milliseconds wait) {
  std::array<pollfd, 2> fds{{{stdout_closed_ ? -1 : process_.stdout_fd(), POLLIN, 0},
                             {stderr_closed_ ? -1 : process_.stderr_fd(), POLLIN, 0}}};
  const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(wait.count()));
  if (ready > 0) {
    if (fds[0].revents != 0) read_stdout();
    if (fds[1].revents != 0) read_stderr();
  }
}

void PluginSession::read_stdout() {
  if (!read_available(process_.stdout_fd(), stdout_buffer_)) stdout_closed_ = true;
}

// The plugin's diagnostics go to the host's stderr, a line at a time, marked as the plugin's.
void PluginSession::read_stderr() {
  if (!read_available(process_.stderr_fd(), stderr_buffer_)) stderr_closed_ = true;
  while (auto line = take_line(stderr_buffer_)) {
    std::fprintf(stderr, "plugin stderr: %s\n", line->c_str());
  }
  if (stderr_buffer_.size() > kMaxLineBytes) stderr_buffer_.clear();
}

}  // namespace plugin_host
