// What the library's own tests share: a Spec for a shell script talked to over pipes.
#pragma once

#include <string>

#include "jail/spec.hpp"

namespace jail_test {

inline jail::Spec shell(const std::string& script) {
  jail::Spec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.env = jail::default_environment();
  spec.stdio = jail::Stdio::pipe;
  return spec;
}

}  // namespace jail_test
