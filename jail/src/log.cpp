#include "log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

namespace jail {
namespace {

thread_local const LogFields* current_fields = nullptr;

}  // namespace

const LogFields* current_log_fields() {
  return current_fields;
}

ScopedLogFields::ScopedLogFields(const LogFields& fields) : previous_(current_fields) {
  current_fields = &fields;
}

ScopedLogFields::~ScopedLogFields() {
  current_fields = previous_;
}

spdlog::logger& log() {
  if (auto registered = spdlog::get("jail")) return *registered;
  static const std::shared_ptr<spdlog::logger> fallback = [] {
    auto logger =
        std::make_shared<spdlog::logger>("jail", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    logger->set_pattern("jail: %v");
    logger->set_level(spdlog::level::warn);
    return logger;
  }();
  return *fallback;
}

}  // namespace jail
