#include "logging.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#include "jail/log_fields.hpp"
#include "log_queue.hpp"
#include "open_output.hpp"

namespace jail::runner {
namespace {

// Formats each message (one JSON object a line for log collectors, whose messages spdlog's
// patterns cannot escape; or the sink's pattern) and queues it for the LogQueue's writer.
class QueuedSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  QueuedSink(std::shared_ptr<LogQueue> queue, LogFormat format)
      : queue_(std::move(queue)), format_(format) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (format_ == LogFormat::text) {
      spdlog::memory_buf_t formatted;
      formatter_->format(msg, formatted);
      queue_->push(std::string(formatted.data(), formatted.size()));
      return;
    }
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(msg.time.time_since_epoch());
    nlohmann::ordered_json line = {
        {"time_ms", ms.count()},
        {"level", std::string(spdlog::level::to_string_view(msg.level).data(),
                              spdlog::level::to_string_view(msg.level).size())},
        {"message", std::string(msg.payload.data(), msg.payload.size())}};
    // What a collector filters on without parsing the message: a denial's fields.
    if (const jail::LogFields* fields = jail::current_log_fields()) {
      line["event"] = fields->event;
      if (!fields->syscall.empty()) line["syscall"] = fields->syscall;
      if (fields->args != nullptr) line["args"] = *fields->args;
      if (fields->pid != 0) line["pid"] = fields->pid;
      if (!fields->rule.empty()) line["rule"] = fields->rule;
      if (!fields->action.empty()) line["action"] = fields->action;
      line["count"] = fields->count;
    }
    queue_->push(line.dump() + "\n");
  }
  void flush_() override { queue_->flush(); }

 private:
  std::shared_ptr<LogQueue> queue_;
  LogFormat format_;
};

// The queue of the logger setup_logging made last; written out as jail exits.
std::shared_ptr<LogQueue>& current_queue() {
  static std::shared_ptr<LogQueue> queue;
  return queue;
}

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
  // --log-fd: a duplicate, so closing it never closes the caller's fd. --log-file: opened here,
  // appended to, its directory never made (spdlog's own file sink creates missing parents).
  int fd = STDERR_FILENO;
  bool owned = false;
  if (options.fd >= 0) {
    fd = ::fcntl(options.fd, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) throw std::runtime_error("cannot write to --log-fd " + std::to_string(options.fd));
    owned = true;
  } else if (!options.file.empty()) {
    fd = open_output(options.file, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
      const int err = errno;
      throw std::runtime_error("--log-file " + options.file +
                               ": cannot open it: " + std::strerror(err) + open_output_hint(err));
    }
    owned = true;
  }
  auto queue = std::make_shared<LogQueue>(fd, owned);
  auto sink = std::make_shared<QueuedSink>(queue, options.format);
  sink->set_pattern(owned ? "%Y-%m-%dT%H:%M:%S.%e jail[%P] %l: %v" : "jail: %v");
  auto logger = std::make_shared<spdlog::logger>("jail", sink);
  logger->set_level(level_for(options));
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  static const bool close_at_exit = [] {
    // Written out before jail exits, as long as the reader keeps reading (LogQueue::close).
    return std::atexit([] {
             if (current_queue()) current_queue()->close(LogQueue::kPatience);
           }) == 0;
  }();
  (void)close_at_exit;
  current_queue() = std::move(queue);
  for (const std::string& warning : options.warnings) spdlog::warn("{}", warning);
  for (const std::string& note : options.notes) spdlog::info("{}", note);
}

}  // namespace jail::runner
