// plugin_host_cli: the plugin host of examples/plugin_host, driving the `jail` executable instead
// of linking the library. Boost.Process starts `jail … -- python3 /plugin/plugin.py` with three
// asynchronous pipes (boost::asio), and a fourth pipe carries jail's --status-fd JSON, which says
// how the run ended without the host decoding exit codes.
//
//   plugin_host_cli [--jail PATH] [--plugin-dir DIR] [--timeout MS] [--answer-timeout MS] [--hang]
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <istream>
#include <string>
#include <utility>  // before asio: Boost 1.74's awaitable.hpp uses std::exchange without it
#include <vector>

#include <boost/asio.hpp>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <nlohmann/json.hpp>

#ifndef PLUGIN_HOST_PLUGIN_DIR
#define PLUGIN_HOST_PLUGIN_DIR "."
#endif
#ifndef PLUGIN_HOST_JAIL
#define PLUGIN_HOST_JAIL "jail"
#endif

namespace {

namespace asio = boost::asio;
namespace bp = boost::process;
using nlohmann::json;
using std::chrono::milliseconds;

struct Options {
  std::string jail = PLUGIN_HOST_JAIL;
  std::string plugin_dir = PLUGIN_HOST_PLUGIN_DIR;
  milliseconds timeout{10'000};        // jail --timeout: the plugin's whole life
  milliseconds answer_timeout{3'000};  // how long the host waits for one answer
  bool hang = false;                   // also ask for something that never ends
};

[[noreturn]] void usage(const char* problem) {
  std::fprintf(stderr,
               "plugin_host_cli: %s\nusage: plugin_host_cli [--jail PATH] [--plugin-dir DIR] "
               "[--timeout MS] [--answer-timeout MS] [--hang]\n",
               problem);
  std::exit(2);
}

milliseconds parse_ms(const char* text) {
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || value <= 0) usage("expected a number of milliseconds");
  return milliseconds(value);
}

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--hang") == 0) {
      options.hang = true;
    } else if (std::strcmp(argv[i], "--jail") == 0 && has_value) {
      options.jail = argv[++i];
    } else if (std::strcmp(argv[i], "--plugin-dir") == 0 && has_value) {
      options.plugin_dir = argv[++i];
    } else if (std::strcmp(argv[i], "--timeout") == 0 && has_value) {
      options.timeout = parse_ms(argv[++i]);
    } else if (std::strcmp(argv[i], "--answer-timeout") == 0 && has_value) {
      options.answer_timeout = parse_ms(argv[++i]);
    } else {
      usage("unknown or incomplete option");
    }
  }
  return options;
}

// The same jail as plugin_host's Spec, as flags: the plugin's folder read-only at /plugin and
// nothing else of the host's files, no network, the Python policy, limits on time and files.
std::vector<std::string> jail_arguments(const Options& options, int status_fd) {
  // clang-format off
  return {"-q",
          "--status-fd", std::to_string(status_fd),
          "--timeout", std::to_string(options.timeout.count()) + "ms",
          "--kill-grace", "500ms",
          "--cpu-time", "30s",
          "--max-open-files", "64",
          "--policy", "python",
          "--no-cwd",
          "--ro-bind", options.plugin_dir + ":/plugin",
          "--cwd", "/plugin",
          "--", "python3", "/plugin/plugin.py"};
  // clang-format on
}

std::vector<json> requests(bool hang) {
  std::vector<json> list = {
      {{"id", 1}, {"method", "add"}, {"params", {2, 3}}},
      {{"id", 2}, {"method", "upper"}, {"params", {"jailed plugins"}}},
      {{"id", 3}, {"method", "word_count"}, {"params", {"one two three four"}}},
      {{"id", 4}, {"method", "whoami"}, {"params", json::array()}},
  };
  if (hang) list.push_back({{"id", 5}, {"method", "sleep"}, {"params", {3600}}});
  return list;
}

// One request at a time: write it, wait for its answer line or the answer timeout, go on. When
// the last answer is in, the plugin's stdin is closed, which ends it.
class Conversation {
 public:
  Conversation(asio::io_context& io, bp::async_pipe& to_plugin, bp::async_pipe& from_plugin,
               std::vector<json> requests, milliseconds answer_timeout, pid_t jail_pid)
      : to_plugin_(to_plugin),
        from_plugin_(from_plugin),
        timer_(io),
        requests_(std::move(requests)),
        answer_timeout_(answer_timeout),
        jail_pid_(jail_pid) {}

  void start() { send_next(); }
  [[nodiscard]] std::size_t answered() const { return answered_; }
  [[nodiscard]] std::size_t asked() const { return requests_.size(); }

 private:
  void send_next() {
    if (next_ == requests_.size()) {
      to_plugin_.close();
      read_rest();
      return;
    }
    line_ = requests_[next_].dump() + "\n";
    std::printf("-> %s", line_.c_str());
    std::fflush(stdout);
    asio::async_write(to_plugin_, asio::buffer(line_),
                      [this](boost::system::error_code error, std::size_t) {
                        if (error) return stop("the plugin no longer reads its stdin");
                        await_answer();
                      });
  }

  void await_answer() {
    timer_.expires_after(answer_timeout_);
    timer_.async_wait([this](boost::system::error_code error) {
      if (error) return;  // cancelled: the answer came
      std::printf("!! the plugin did not answer in time\n");
      // SIGTERM to jail is forwarded to the tool; jail still reports, with outcome "signaled".
      ::kill(jail_pid_, SIGTERM);
    });
    asio::async_read_until(from_plugin_, answers_, '\n',
                           [this](boost::system::error_code error, std::size_t) {
                             timer_.cancel();
                             if (error) return stop("the plugin closed its stdout (it has ended)");
                             on_answer();
                           });
  }

  void on_answer() {
    std::istream stream(&answers_);
    std::string line;
    std::getline(stream, line);
    const json answer = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (answer.is_discarded()) return stop("the plugin wrote a line that is not JSON: " + line);
    std::printf("<- %s\n", answer.dump().c_str());
    if (answer.value("id", -1) == requests_[next_].at("id").get<int>() &&
        answer.contains("result")) {
      ++answered_;
    }
    ++next_;
    send_next();
  }

  void stop(const std::string& problem) {
    std::printf("!! %s\n", problem.c_str());
    to_plugin_.close();
    read_rest();
  }

  // Until jail ends: anything the plugin says unasked is shown, and its stdout is drained.
  void read_rest() {
    asio::async_read_until(from_plugin_, answers_, '\n',
                           [this](boost::system::error_code error, std::size_t) {
                             if (error) return;
                             std::istream stream(&answers_);
                             std::string line;
                             std::getline(stream, line);
                             std::printf("<- (unasked) %s\n", line.c_str());
                             read_rest();
                           });
  }

  bp::async_pipe& to_plugin_;
  bp::async_pipe& from_plugin_;
  asio::steady_timer timer_;
  std::vector<json> requests_;
  milliseconds answer_timeout_;
  pid_t jail_pid_;
  std::size_t next_ = 0;
  std::size_t answered_ = 0;
  std::string line_;
  asio::streambuf answers_;
};

// jail's own messages and the plugin's stderr share the pipe; each line is passed on, marked.
void relay_stderr(bp::async_pipe& errors, asio::streambuf& buffer) {
  asio::async_read_until(errors, buffer, '\n', [&](boost::system::error_code error, std::size_t) {
    if (error) return;
    std::istream stream(&buffer);
    std::string line;
    std::getline(stream, line);
    std::fprintf(stderr, "plugin stderr: %s\n", line.c_str());
    relay_stderr(errors, buffer);
  });
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  // A plugin that has died must show up as a failed write, not kill the host.
  std::signal(SIGPIPE, SIG_IGN);

  asio::io_context io;
  bp::async_pipe to_plugin(io), from_plugin(io), plugin_errors(io);
  // The status pipe is the host's own: close-on-exec everywhere except, in the child just before
  // exec, its write end, whose number jail is told with --status-fd.
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
    std::perror("plugin_host_cli: pipe2");
    return 2;
  }
  const int status_fd = status_pipe[1];
  asio::posix::stream_descriptor status_reader(io, status_pipe[0]);

  std::error_code spawn_error;
  bp::child jail(
      options.jail, bp::args(jail_arguments(options, status_fd)), (bp::std_in < to_plugin),
      (bp::std_out > from_plugin), (bp::std_err > plugin_errors),
      bp::extend::on_exec_setup = [status_fd](auto&) { ::fcntl(status_fd, F_SETFD, 0); },
      spawn_error);
  ::close(status_fd);  // jail holds the only write end now: its exit is the status pipe's EOF
  if (spawn_error) {
    std::fprintf(stderr, "plugin_host_cli: cannot run %s: %s\n", options.jail.c_str(),
                 spawn_error.message().c_str());
    return 2;
  }
  std::printf("jail started, pid %d\n", static_cast<int>(jail.id()));

  Conversation conversation(io, to_plugin, from_plugin, requests(options.hang),
                            options.answer_timeout, jail.id());
  conversation.start();
  asio::streambuf stderr_buffer;
  relay_stderr(plugin_errors, stderr_buffer);
  std::string status_text;
  asio::async_read(status_reader, asio::dynamic_buffer(status_text),
                   [](boost::system::error_code, std::size_t) {});
  io.run();  // until the plugin's stdout, stderr and the status pipe have all ended
  jail.wait();

  std::printf("answered %zu of %zu requests\n", conversation.answered(), conversation.asked());
  const json status = json::parse(status_text, nullptr, /*allow_exceptions=*/false);
  if (status.is_discarded() || !status.is_object()) {
    std::printf("!! no status JSON from jail (exit code %d)\n", jail.exit_code());
    return 1;
  }
  while (!status_text.empty() && status_text.back() == '\n') status_text.pop_back();
  std::printf("status: %s\n", status_text.c_str());
  std::printf("outcome: %s, jail exit code %d\n", status.at("outcome").get<std::string>().c_str(),
              jail.exit_code());
  // The status JSON and the exit code tell the same story; the JSON has the detail.
  const bool clean = conversation.answered() == conversation.asked() &&
                     status.at("outcome") == "exited" && status.at("exit_code") == 0 &&
                     jail.exit_code() == 0;
  return clean ? 0 : 1;
}
