#include "policy_cli.hpp"

#include <gtest/gtest.h>
#include <linux/audit.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "policy_command.hpp"

namespace jail::policy_test {

CliRun run_policy_cli(std::vector<std::string> words) {
  words.insert(words.begin(), "policy");
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int code = jail::runner::run_policy_command(static_cast<int>(argv.size()), argv.data());
  return CliRun{code, ::testing::internal::GetCapturedStdout(),
                ::testing::internal::GetCapturedStderr()};
}

seccomp_data call(long nr, std::vector<std::uint64_t> args) {
  seccomp_data d{};
  d.nr = static_cast<int>(nr);
  d.arch = AUDIT_ARCH_X86_64;
  for (std::size_t i = 0; i < args.size() && i < 6; ++i) d.args[i] = args[i];
  return d;
}

ScratchDir::ScratchDir() {
  char name[] = "/tmp/jail-test-policy-XXXXXX";
  if (::mkdtemp(name) == nullptr) throw std::runtime_error("mkdtemp under /tmp failed");
  path_ = name;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ScratchDir::write(const std::string& name, const std::string& body) const {
  const std::string file = path_ + "/" + name;
  std::ofstream(file) << body;
  return file;
}

}  // namespace jail::policy_test
