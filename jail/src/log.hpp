// libjail's messages go to the logger named "jail": the CLI installs its own (stderr or
// --log-file, text or JSON); a library host gets one on stderr at warning level unless it
// registers its own under that name. Never spdlog's default logger, which writes to stdout — a
// plugin host's stdout is often its protocol channel.
#pragma once

#include <spdlog/spdlog.h>

#include "jail/log_fields.hpp"

namespace jail {

[[nodiscard]] spdlog::logger& log();

// Makes `fields` current_log_fields() on this thread while it lives: around one log call.
class ScopedLogFields {
 public:
  explicit ScopedLogFields(const LogFields& fields);
  ~ScopedLogFields();
  ScopedLogFields(const ScopedLogFields&) = delete;
  ScopedLogFields& operator=(const ScopedLogFields&) = delete;

 private:
  const LogFields* previous_;
};

}  // namespace jail
