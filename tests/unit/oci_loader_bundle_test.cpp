// oci::write_bundle with a compiled program (BundleSeccomp::program): a jail runsc run's bundle
// starts the tool through jail's policy loader when its command is known to run in the jail
// (oci/command_runs.hpp) — found as execvp finds it, a regular executable file on a mount that
// allows exec, ELF or a #! script whose interpreter is ELF — and hands runsc the OCI profile
// otherwise, so that runsc's own words name whatever would fail.
#include <gtest/gtest.h>

#include <linux/filter.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oci/bundle.hpp"
#include "policy/compile.hpp"
#include "policy/policy.hpp"
#include "runsc/policy_loader.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;

class OciLoaderBundle : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directory(dir_ / "work");
    script("tool.sh", "#!/bin/sh\ntrue\n", 0755);
    program_ =
        jail::policy::compile(jail::policy::load_policy("default"), jail::policy::Routing::direct);
  }

  void script(const std::string& name, const std::string& text, int mode) {
    std::ofstream(dir_ / "work" / name) << text;
    fs::permissions(dir_ / "work" / name, static_cast<fs::perms>(mode));
  }

  struct Written {
    nlohmann::json config;
    jail::oci::BundleFacts facts;
    fs::path rootfs;
  };

  // A bundle for `argv` with dir_/work bound at /work, started there, PATH as given.
  Written bundle(std::vector<std::string> argv, const std::string& path_env = "/usr/bin:/bin",
                 jail::oci::BundleUse use = jail::oci::BundleUse::run_once,
                 const std::string& work_target = "/work") {
    jail::Spec spec;
    spec.argv = std::move(argv);
    spec.cwd = work_target;
    spec.env = {"PATH=" + path_env, "HOME=/tmp"};
    spec.mounts.push_back({jail::MountKind::ro_bind, (dir_ / "work").string(), work_target,
                           std::nullopt, "--ro-bind"});
    const fs::path dir = dir_ / ("bundle" + std::to_string(++bundles_));
    Written written;
    written.facts =
        jail::oci::write_bundle(spec, dir,
                                {.profile =
                                     [] {
                                       return nlohmann::json{{"defaultAction", "SCMP_ACT_ERRNO"}};
                                     },
                                 .program = &program_},
                                use);
    std::ifstream in(dir / "config.json");
    written.config = nlohmann::json::parse(in);
    written.rootfs = dir / "rootfs";
    return written;
  }

  // The path the loader is told to exec, or nullopt when the bundle hands runsc the profile.
  std::optional<std::string> loader_exec(const Written& written) {
    const nlohmann::json& args = written.config["process"]["args"];
    const bool has_profile = written.config["linux"].contains("seccomp");
    EXPECT_EQ(written.facts.policy_in_sandbox, !has_profile) << written.config.dump();
    if (has_profile) {
      EXPECT_NE(args[0], jail::kPolicyLoaderPath) << args.dump();
      return std::nullopt;
    }
    EXPECT_EQ(args[0], jail::kPolicyLoaderPath) << args.dump();
    EXPECT_EQ(args[1], jail::kPolicyProgramPath) << args.dump();
    return args[2].get<std::string>();
  }

  jail::TempDir temp_{"jail-test-loader-bundle"};  // removed with all in it when the test ends
  fs::path dir_ = temp_.path();
  int bundles_ = 0;
  jail::policy::Program program_;
};

TEST_F(OciLoaderBundle, ABareNameOnPathIsStartedByTheLoader) {
  const Written written = bundle({"true", "--flag"});
  EXPECT_EQ(loader_exec(written), "/usr/bin/true");
  const nlohmann::json& args = written.config["process"]["args"];
  EXPECT_EQ(args, nlohmann::json({jail::kPolicyLoaderPath, jail::kPolicyProgramPath,
                                  "/usr/bin/true", "true", "--flag"}));
  // The tool's environment is as it was; the program is a file beside the loader, whole.
  EXPECT_EQ(written.config["process"]["env"], nlohmann::json({"PATH=/usr/bin:/bin", "HOME=/tmp"}));
  const fs::path loader = written.rootfs / jail::kPolicyLoaderPath.substr(1);
  EXPECT_EQ(fs::file_size(loader), jail::kPolicyLoaderProgramSize);
  EXPECT_EQ(fs::file_size(written.rootfs / jail::kPolicyProgramPath.substr(1)),
            program_.instructions.size() * sizeof(sock_filter));
}

TEST_F(OciLoaderBundle, PathsAreTakenFromTheWorkingDirectoryAndThroughLinks) {
  EXPECT_EQ(loader_exec(bundle({"./tool.sh"})), "./tool.sh");
  EXPECT_EQ(loader_exec(bundle({"/work/tool.sh"})), "/work/tool.sh");
  // /bin is a link to usr/bin in the host-minimal root; the exec follows it as given.
  EXPECT_EQ(loader_exec(bundle({"/bin/sh"})), "/bin/sh");
  // The first PATH entry that holds the name, a relative one from the working directory.
  EXPECT_EQ(loader_exec(bundle({"tool.sh"}, "/usr/bin:.")), "/work/./tool.sh");
  EXPECT_EQ(loader_exec(bundle({"tool.sh"}, "/work:/usr/bin")), "/work/tool.sh");
}

TEST_F(OciLoaderBundle, WhatMightNotRunIsLeftToRunsc) {
  script("orphan.sh", "#!/no/such/interpreter\n", 0755);
  script("plain.txt", "not a program\n", 0755);
  script("private.sh", "#!/bin/sh\n", 0700);  // root's; the jail runs as 1000 or the caller
  script("unmarked.sh", "#!/bin/sh\n", 0644);
  script("nested.sh", "#!/work/tool.sh\n", 0755);
  script("long.sh", "#!" + std::string(300, 'x') + "\n", 0755);
  fs::create_directory(dir_ / "work/adir");
  // ELF files an exec would refuse, or whose dynamic loader is not in the jail: a 32-bit header,
  // and a copy of /usr/bin/true whose PT_INTERP names a loader that is not there.
  script("elf32",
         std::string("\x7f"
                     "ELF\x01\x01\x01") +
             std::string(60, '\0'),
         0755);
  {
    std::ifstream in("/usr/bin/true", std::ios::binary);
    std::string image(std::istreambuf_iterator<char>(in), {});
    const std::string interpreter = "/lib64/ld-linux-x86-64.so.2";
    const std::size_t at = image.find(interpreter);
    ASSERT_NE(at, std::string::npos) << "/usr/bin/true names no dynamic loader";
    image.replace(at + interpreter.size() - 1, 1, "9");
    script("lost-loader", image, 0755);
  }
  EXPECT_EQ(loader_exec(bundle({"/usr/bin/true"})), "/usr/bin/true");
  for (const char* command :
       {"/work/missing", "./orphan.sh", "./plain.txt", "./unmarked.sh", "./nested.sh", "./long.sh",
        "./adir", "no-such-tool-anywhere", "./elf32", "./lost-loader"}) {
    SCOPED_TRACE(command);
    EXPECT_EQ(loader_exec(bundle({command})), std::nullopt);
  }
  if (::geteuid() == 0) {
    SCOPED_TRACE("private.sh");
    EXPECT_EQ(loader_exec(bundle({"./private.sh"})), std::nullopt);
  }
  // The first PATH entry that holds the name decides: a directory there is not looked past.
  fs::create_directory(dir_ / "work/true");
  EXPECT_EQ(loader_exec(bundle({"true"}, "/work:/usr/bin")), std::nullopt);
  // An empty entry (the working directory) and no PATH at all are left to runsc's search.
  EXPECT_EQ(loader_exec(bundle({"true"}, ":/usr/bin")), std::nullopt);
  EXPECT_EQ(loader_exec(bundle({"true"}, "")), std::nullopt);
}

TEST_F(OciLoaderBundle, AMountOverTheLoaderOrAnExportedBundleGetsTheProfile) {
  EXPECT_EQ(loader_exec(bundle({"/usr/bin/true"}, "/usr/bin", jail::oci::BundleUse::run_once,
                               std::string(jail::kPolicyLoaderDirectory))),
            std::nullopt);
  const Written kept = bundle({"true"}, "/usr/bin:/bin", jail::oci::BundleUse::kept);
  EXPECT_EQ(loader_exec(kept), std::nullopt);
  EXPECT_FALSE(fs::exists(kept.rootfs / jail::kPolicyLoaderDirectory.substr(1)));
}

}  // namespace
