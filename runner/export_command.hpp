// `jail export-oci --bundle DIR [run options] -- COMMAND…`: the run as an OCI bundle.
#pragma once

#include <string>
#include <vector>

namespace jail::runner {

[[nodiscard]] int export_oci_command(const std::vector<std::string>& options,
                                     const std::vector<std::string>& command);

}  // namespace jail::runner
