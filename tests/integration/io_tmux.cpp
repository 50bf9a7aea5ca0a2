#include "io_tmux.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "../support/time_scale.hpp"

extern char** environ;

namespace jail_test::io {
namespace {

using Clock = std::chrono::steady_clock;

struct Ran {
  int status = -1;
  std::string out;
};

// Runs `argv` (looked up on PATH) with stdin from /dev/null and stdout captured; stderr goes to
// the same pipe. Gives up (SIGKILL) after `timeout`. status -1: it could not be run.
Ran run_program(const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
  std::vector<std::string> storage = args;
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The caller's own tmux, if any, must not be the one this talks to.
  std::vector<std::string> env_storage;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "TMUX=", 5) != 0 && std::strncmp(*e, "TMUX_PANE=", 10) != 0) {
      env_storage.emplace_back(*e);
    }
  }
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "pipe2");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid == 0) {
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(out[1], 1) < 0 || ::dup2(out[1], 2) < 0) {
      ::_exit(126);
    }
    ::execvpe(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out[1]);
  Ran ran;
  const auto deadline = Clock::now() + timeout;
  char buf[8192];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    ran.out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ran.status = WIFEXITED(status) && WEXITSTATUS(status) != 127 ? WEXITSTATUS(status) : -1;
  return ran;
}

std::string unique_socket() {
  static std::atomic<int> counter{0};
  return "jail-io-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

// Where tmux puts the socket of `-L name`: $TMUX_TMPDIR (or /tmp), then tmux-UID. Worked out here
// rather than asked of the server: a `display-message` sent while the new server was still
// starting its pane once came back "server exited unexpectedly" in CI, failing a test before
// jail had run at all.
std::string socket_path_for(const std::string& name) {
  const char* dir = std::getenv("TMUX_TMPDIR");
  const std::string base = dir != nullptr && *dir != '\0' ? dir : "/tmp";
  return base + "/tmux-" + std::to_string(::getuid()) + "/" + name;
}

}  // namespace

std::optional<std::string> tmux_missing() {
  const Ran ran = run_program({"tmux", "-V"}, std::chrono::seconds(10));
  if (ran.status == 0) return std::nullopt;
  return "tmux is missing: the terminal tests drive jail through a tmux pane and cannot run "
         "without it (Debian: apt-get install tmux). `tmux -V` said: " +
         ran.out;
}

Tmux::Tmux(const std::string& command, int width, int height)
    : socket_(unique_socket()), socket_path_(socket_path_for(socket_)) {
  const Ran ran =
      run_program({"tmux", "-L", socket_, "-f", "/dev/null", "new-session", "-d", "-s", "io", "-x",
                   std::to_string(width), "-y", std::to_string(height), command},
                  std::chrono::seconds(20));
  started_ = true;  // a server may be running even when the client failed
  if (ran.status != 0) throw std::runtime_error("tmux new-session failed: " + ran.out);
}

Tmux::~Tmux() {
  if (!started_) return;
  (void)run_program({"tmux", "-L", socket_, "kill-server"}, std::chrono::seconds(10));
  // tmux leaves the socket file behind when its server is killed.
  if (!socket_path_.empty()) ::unlink(socket_path_.c_str());
}

std::string Tmux::tmux(const std::vector<std::string>& args) const {
  std::vector<std::string> all{"tmux", "-L", socket_};
  all.insert(all.end(), args.begin(), args.end());
  const Ran ran = run_program(all, std::chrono::seconds(10));
  if (ran.status != 0) throw std::runtime_error("tmux " + args.front() + " failed: " + ran.out);
  return ran.out;
}

std::string Tmux::screen() const {
  return tmux({"capture-pane", "-p", "-J", "-S", "-", "-t", "io"});
}

bool Tmux::wait_for(std::string_view needle, std::chrono::milliseconds timeout,
                    std::string* last) const {
  const auto deadline = Clock::now() + scaled(timeout);
  for (;;) {
    const std::string text = screen();
    if (last != nullptr) *last = text;
    if (text.find(needle) != std::string::npos) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void Tmux::type(const std::string& text) const {
  (void)tmux({"send-keys", "-t", "io", "-l", text});
}

void Tmux::press(const std::string& key) const {
  (void)tmux({"send-keys", "-t", "io", key});
}

void Tmux::resize(int width, int height) const {
  (void)tmux(
      {"resize-window", "-t", "io", "-x", std::to_string(width), "-y", std::to_string(height)});
}

std::string Tmux::pane_size() const {
  std::string size = tmux({"display-message", "-p", "-t", "io", "#{pane_width}x#{pane_height}"});
  while (!size.empty() && (size.back() == '\n' || size.back() == '\r')) size.pop_back();
  return size;
}

}  // namespace jail_test::io
