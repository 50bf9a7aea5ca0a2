#include "jail/spec.hpp"

namespace jail {

std::vector<std::string> default_environment(const std::string& term) {
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8"};
  if (!term.empty()) env.push_back("TERM=" + term);
  return env;
}

std::optional<std::string> environment_value(const std::vector<std::string>& env,
                                             std::string_view name) {
  std::optional<std::string> value;
  for (const std::string& entry : env) {
    if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=')
      value = entry.substr(name.size() + 1);
  }
  return value;
}

}  // namespace jail
