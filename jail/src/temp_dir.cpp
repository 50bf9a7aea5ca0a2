#include "temp_dir.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "log.hpp"

#include "jail/error.hpp"

namespace jail {

TempDir::TempDir(const std::string& prefix, std::filesystem::path base) {
  std::error_code error;
  if (base.empty()) base = std::filesystem::temp_directory_path(error);
  if (error) base = "/tmp";
  std::string pattern = (base / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    const int err = errno;
    throw Error("temp_dir", err,
                fmt::format("cannot create a private directory in {}: {}", base.string(), std::strerror(err)));
  }
  path_ = pattern;
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    TempDir old(std::move(*this));
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code error;
  std::filesystem::remove_all(path_, error);
  if (error) jail::log().error("could not remove {}: {}", path_.string(), error.message());
}

}  // namespace jail
