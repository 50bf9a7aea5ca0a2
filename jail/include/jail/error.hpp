// jail::Error — a failure on the parent side, carrying the step, the errno and the whole sentence.
#pragma once

#include <stdexcept>
#include <string>

namespace jail {

class Error : public std::runtime_error {
 public:
  Error(std::string step, int errno_value, const std::string& message)
      : std::runtime_error(message), step_(std::move(step)), errno_value_(errno_value) {}

  [[nodiscard]] const std::string& step() const noexcept { return step_; }
  [[nodiscard]] int errno_value() const noexcept { return errno_value_; }

 private:
  std::string step_;
  int errno_value_;
};

}  // namespace jail
