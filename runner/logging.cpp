#include "logging.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>

#include "open_output.hpp"

namespace jail::runner {
namespace {

// One JSON object a line, for log collectors; spdlog's patterns cannot escape a message.
class JsonLineSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit JsonLineSink(std::FILE* out) : out_(out) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(msg.time.time_since_epoch());
    const nlohmann::json line = {
        {"time_ms", ms.count()},
        {"level", std::string(spdlog::level::to_string_view(msg.level).data(),
                              spdlog::level::to_string_view(msg.level).size())},
        {"message", std::string(msg.payload.data(), msg.payload.size())}};
    const std::string text = line.dump() + "\n";
    std::fwrite(text.data(), 1, text.size(), out_);
  }
  void flush_() override { std::fflush(out_); }

 private:
  std::FILE* out_;
};

spdlog::level::level_enum level_for(const LogOptions& options) {
  // Errors always show (they explain an exit code of 125); -q hides warnings.
  if (options.quiet) return spdlog::level::err;
  switch (options.verbosity) {
    case 0:
      return spdlog::level::warn;
    case 1:
      return spdlog::level::info;
    case 2:
      return spdlog::level::debug;
    default:
      return spdlog::level::trace;
  }
}

}  // namespace

void setup_logging(const LogOptions& options) {
  spdlog::sink_ptr sink;
  // --log-fd: a private stream on a duplicate, so closing it never closes the caller's fd.
  // --log-file: opened here, appended to, its directory never made (spdlog's own file sink
  // creates missing parents).
  std::FILE* given = nullptr;
  if (options.fd >= 0) {
    const int copy = ::fcntl(options.fd, F_DUPFD_CLOEXEC, 3);
    given = copy >= 0 ? ::fdopen(copy, "a") : nullptr;
    if (given == nullptr)
      throw std::runtime_error("cannot write to --log-fd " + std::to_string(options.fd));
  } else if (!options.file.empty()) {
    const int fd =
        open_output(options.file, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
      const int err = errno;
      throw std::runtime_error("--log-file " + options.file +
                               ": cannot open it: " + std::strerror(err) + open_output_hint(err));
    }
    given = ::fdopen(fd, "a");
    if (given == nullptr) {
      ::close(fd);
      throw std::runtime_error("--log-file " + options.file + ": cannot write to it");
    }
  }
  if (given != nullptr) std::setvbuf(given, nullptr, _IOLBF, 0);
  if (options.format == LogFormat::json) {
    sink = std::make_shared<JsonLineSink>(given != nullptr ? given : stderr);
  } else if (given != nullptr) {
    sink = std::make_shared<spdlog::sinks::stdout_sink_base<spdlog::details::console_mutex>>(given);
    sink->set_pattern("%Y-%m-%dT%H:%M:%S.%e jail[%P] %l: %v");
  } else {
    sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    sink->set_pattern("jail: %v");
  }
  auto logger = std::make_shared<spdlog::logger>("jail", sink);
  logger->set_level(level_for(options));
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  for (const std::string& warning : options.warnings) spdlog::warn("{}", warning);
  for (const std::string& note : options.notes) spdlog::info("{}", note);
}

}  // namespace jail::runner
