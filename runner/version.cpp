#include "version.hpp"

#include <seccomp.h>

#include <fmt/format.h>

#include "jail_build_version.hpp"

namespace jail::runner {

std::string version_text() {
  // The library's version at run time, not the headers': a host may have upgraded it since.
  const scmp_version* library = seccomp_version();
  return fmt::format("jail {} (commit {})\nlibseccomp {}.{}.{} (API level {})\n", JAIL_VERSION,
                     JAIL_COMMIT, library->major, library->minor, library->micro,
                     seccomp_api_get());
}

}  // namespace jail::runner
