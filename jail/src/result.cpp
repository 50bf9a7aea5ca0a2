#include <cerrno>

#include "jail/result.hpp"

namespace jail {

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::exited:
      return "exited";
    case Outcome::signaled:
      return "signaled";
    case Outcome::timeout:
      return "timeout";
    case Outcome::oom:
      return "oom";
    case Outcome::violation:
      return "violation";
    case Outcome::setup_error:
      return "setup_error";
    case Outcome::internal_error:
      return "internal_error";
  }
  return "internal_error";
}

int exit_code_for(const Result& result) {
  switch (result.outcome) {
    case Outcome::exited:
      return result.exit_code;
    case Outcome::signaled:
      return 128 + result.signal;
    case Outcome::timeout:
      return 124;
    case Outcome::oom:
      return 137;
    case Outcome::violation:
      return 159;
    case Outcome::setup_error:
      if (result.error && result.error->step == "exec") {
        return result.error->errno_value == ENOENT ? 127 : 126;
      }
      return 125;
    case Outcome::internal_error:
      return 125;
  }
  return 125;
}

}  // namespace jail
