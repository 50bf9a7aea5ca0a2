// plugin_host: a plugin host on libjail's C++ API. It starts a third-party Python plugin in a
// jail, talks to it in JSON lines over its stdin/stdout, bounds it in time, and prints the Result.
//
//   plugin_host [--plugin-dir DIR] [--timeout MS] [--answer-timeout MS] [--hang]
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <jail/error.hpp>
#include <jail/launch.hpp>
#include <jail/spec.hpp>
#include <nlohmann/json.hpp>

#include "plugin_session.hpp"

#ifndef PLUGIN_HOST_PLUGIN_DIR
#define PLUGIN_HOST_PLUGIN_DIR "."
#endif

namespace {

using std::chrono::milliseconds;

struct Options {
  std::string plugin_dir = PLUGIN_HOST_PLUGIN_DIR;
  milliseconds timeout{10'000};  // the jail's own wall-clock limit for the plugin's whole life
  milliseconds answer_timeout{3'000};  // how long the host waits for one answer
  bool hang = false;                   // also ask for something that never ends
};

[[noreturn]] void usage(const char* problem) {
  std::fprintf(stderr,
               "plugin_host: %s\nusage: plugin_host [--plugin-dir DIR] [--timeout MS] "
               "[--answer-timeout MS] [--hang]\n",
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

// What the plugin gets: its own folder read-only at /plugin and nothing else of the host's
// files, no network, the Python seccomp policy, and a limit on time, files and processes.
jail::Spec plugin_spec(const Options& options) {
  jail::Spec spec;
  spec.argv = {"python3", "/plugin/plugin.py"};
  spec.env = jail::default_environment();
  spec.mounts.push_back(
      jail::Mount::ro_bind(options.plugin_dir, "/plugin", "the plugin directory (--plugin-dir)"));
  spec.cwd = "/plugin";
  spec.stdio = jail::Stdio::pipe;
  spec.policy = "python";
  spec.limits.timeout = options.timeout;
  spec.limits.kill_grace = milliseconds(500);
  spec.limits.cpu_time = std::chrono::seconds(30);
  spec.limits.max_open_files = 64;
  return spec;
}

std::vector<nlohmann::json> requests(bool hang) {
  std::vector<nlohmann::json> list = {
      {{"id", 1}, {"method", "add"}, {"params", {2, 3}}},
      {{"id", 2}, {"method", "upper"}, {"params", {"jailed plugins"}}},
      {{"id", 3}, {"method", "word_count"}, {"params", {"one two three four"}}},
      {{"id", 4}, {"method", "whoami"}, {"params", nlohmann::json::array()}},
  };
  if (hang) list.push_back({{"id", 5}, {"method", "sleep"}, {"params", {3600}}});
  return list;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  // libjail reports what it does (a timeout, a denied syscall) through spdlog's default logger,
  // which writes to stdout unless told otherwise. This host's stdout is its own: jail's messages
  // go to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("jail"));

  std::optional<jail::Process> process;
  try {
    process.emplace(jail::launch(plugin_spec(options)));
  } catch (const jail::Error& error) {
    // The Spec was refused or the jail could not be made: the step says where.
    std::fprintf(stderr, "plugin_host: cannot start the plugin (step %s): %s\n",
                 error.step().c_str(), error.what());
    return 2;
  }
  std::printf("plugin started in a jail, pid %d\n", static_cast<int>(process->pid()));

  plugin_host::PluginSession session(*process);
  const auto all = requests(options.hang);
  std::size_t answered = 0;
  for (const auto& request : all) {
    std::printf("-> %s\n", request.dump().c_str());
    std::fflush(stdout);
    if (!session.send(request)) break;
    const auto answer =
        session.receive(plugin_host::PluginSession::Clock::now() + options.answer_timeout);
    if (!answer) {
      std::printf("!! %s\n", session.problem().c_str());
      if (session.problem() == "the plugin did not answer in time") {
        // The host's own patience is over before the jail's limit: end the plugin now.
        process->kill(SIGKILL);
      }
      break;
    }
    std::printf("<- %s\n", answer->dump().c_str());
    if (answer->value("id", -1) == request.at("id").get<int>() && answer->contains("result"))
      ++answered;
  }

  const jail::Result result = session.finish();
  std::printf("answered %zu of %zu requests\n", answered, all.size());
  std::printf("result: %s\n", jail::to_json(result).c_str());
  const bool clean =
      answered == all.size() && result.outcome == jail::Outcome::exited && result.exit_code == 0;
  return clean ? 0 : 1;
}
