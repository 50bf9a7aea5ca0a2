// Host side: set-up errors that name the failed step and the system's reason.
#include "setup_error.hpp"

#include <cerrno>
#include <cstring>

namespace jail::egress {

SetupError system_error(const std::string& step) {
  return SetupError(step + ": " + std::strerror(errno));
}

}  // namespace jail::egress
