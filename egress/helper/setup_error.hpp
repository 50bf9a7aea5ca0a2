// Host side: a step of the helper's set-up that failed; main prints it and exits 125.
#pragma once

#include <stdexcept>
#include <string>

namespace jail::egress {

class SetupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "STEP: strerror(errno)" for a failed system call.
[[nodiscard]] SetupError system_error(const std::string& step);

}  // namespace jail::egress
