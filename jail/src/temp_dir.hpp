// A private temporary directory (mkdtemp: unpredictable name, mode 0700), removed with
// everything in it when its owner goes.
#pragma once

#include <filesystem>
#include <string>

namespace jail {

class TempDir {
 public:
  TempDir() = default;
  // Throws jail::Error. `prefix` names what it is for, e.g. "jail-runsc"; made in `base`, or in
  // the temp directory when that is empty.
  explicit TempDir(const std::string& prefix, std::filesystem::path base = {});
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace jail
