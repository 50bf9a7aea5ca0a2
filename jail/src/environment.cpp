#include "jail/spec.hpp"

namespace jail {

std::vector<std::string> default_environment(const std::string& term) {
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8"};
  if (!term.empty()) env.push_back("TERM=" + term);
  return env;
}

}  // namespace jail
