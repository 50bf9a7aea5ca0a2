// The rootfs builder end to end, through the real binary: build a root, run tools in it with
// `jail --rootfs`, and check what the root holds.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "rootfs/elf.hpp"

namespace fs = std::filesystem;

namespace {

struct Output {
  int status = -1;
  std::string text;  // stdout and stderr together
};

// Runs a command line built only from the test's own fixed strings and temp paths.
Output run(const std::string& command) {
  Output out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buffer;
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) out.text += buffer.data();
  const int status = ::pclose(pipe);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

class TempDir {
 public:
  // Under /var/tmp, not /tmp: a jail's /tmp is a fresh tmpfs, so a binary copied into the root
  // under /tmp would be hidden by it.
  TempDir() {
    std::string pattern = "/var/tmp/jail-rootfs-test-XXXXXX";
    path_ = ::mkdtemp(pattern.data());
    fs::permissions(path_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
  }
  ~TempDir() { fs::remove_all(path_); }
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::uintmax_t tree_bytes(const fs::path& root) {
  std::uintmax_t total = 0;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(
           root, fs::directory_options::skip_permission_denied, error);
       it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_regular_file(error) && !it->is_symlink(error)) total += it->file_size(error);
  }
  return total;
}

std::string jail() {
  return JAIL_BINARY;
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(RootfsBuild, Python3RecipeRunsTheStandardLibraryAndHello) {
  TempDir dir;
  const fs::path root = dir.path() / "root";
  const Output build = run(jail() + " rootfs build " + root.string() + " --recipe python3");
  ASSERT_EQ(build.status, 0) << build.text;
  EXPECT_NE(build.text.find("built "), std::string::npos) << build.text;
  std::printf("python3 root: %s", build.text.c_str());

  const Output imports =
      run(jail() + " --rootfs " + root.string() +
          " -- python3 -c 'import json, ssl, sqlite3, subprocess; print(\"imports ok\")'");
  EXPECT_EQ(imports.status, 0) << imports.text;
  EXPECT_NE(imports.text.find("imports ok"), std::string::npos) << imports.text;

  const std::string examples = std::string(JAIL_SOURCE_DIR) + "/examples";
  const Output hello = run(jail() + " --rootfs " + root.string() + " --ro-bind " + examples +
                           ":/tmp/ex --cwd /tmp/ex -- python3 hello.py");
  EXPECT_EQ(hello.status, 0) << hello.text;
  EXPECT_NE(hello.text.find("hello from pid"), std::string::npos) << hello.text;

  // Far below the host's /usr: only what python3 needs came along.
  const auto root_bytes = tree_bytes(root);
  const auto usr_bytes = tree_bytes("/usr");
  std::printf("python3 root %.1f MiB vs host /usr %.1f MiB (%.1f%%)\n", root_bytes / 1048576.0,
              usr_bytes / 1048576.0, 100.0 * root_bytes / usr_bytes);
  EXPECT_LT(root_bytes * 4, usr_bytes);
  // Nothing that is not needed: no compiler, no shell.
  EXPECT_FALSE(fs::exists(root / "usr/bin/gcc"));
  EXPECT_FALSE(fs::exists(root / "usr/bin/bash"));
}

TEST(RootfsBuild, ShellRecipeRunsAScript) {
  TempDir dir;
  const fs::path root = dir.path() / "root";
  ASSERT_EQ(run(jail() + " rootfs build " + root.string() + " --recipe shell").status, 0);
  const Output script =
      run(jail() + " --rootfs " + root.string() +
          " -- sh -c 'mkdir /tmp/d && echo one > /tmp/d/f && cat /tmp/d/f | wc -l'");
  EXPECT_EQ(script.status, 0) << script.text;
  EXPECT_NE(script.text.find("1"), std::string::npos) << script.text;
}

TEST(RootfsBuild, BusyboxRecipeRunsAScript) {
  if (!fs::exists("/usr/bin/busybox") && !fs::exists("/bin/busybox")) {
    FAIL() << "busybox is not installed; scripts/install-deps.sh installs busybox-static";
  }
  TempDir dir;
  const fs::path root = dir.path() / "root";
  const Output build = run(jail() + " rootfs build " + root.string() + " --recipe busybox");
  ASSERT_EQ(build.status, 0) << build.text;
  const Output script = run(jail() + " --rootfs " + root.string() +
                            " -- sh -c 'echo a b c | tr \" \" \"\\n\" | sort | head -1'");
  EXPECT_EQ(script.status, 0) << script.text;
  EXPECT_EQ(script.text, "a\n");
}

TEST(RootfsBuild, StaticBinaryNeedsNoLibraries) {
  TempDir dir;
  write(dir.path() / "static.c",
        "#include <stdio.h>\nint main(void){puts(\"static ok\");return 0;}\n");
  const fs::path binary = dir.path() / "static_hello";
  const Output compile =
      run("gcc -static -O2 -o " + binary.string() + " " + (dir.path() / "static.c").string());
  ASSERT_EQ(compile.status, 0) << compile.text;
  const auto info = jail::rootfs::read_elf(binary);
  ASSERT_TRUE(info.has_value());
  EXPECT_TRUE(info->interpreter.empty());
  EXPECT_TRUE(info->needed.empty());

  const fs::path root = dir.path() / "root";
  ASSERT_EQ(run(jail() + " rootfs build " + root.string() + " --binary " + binary.string()).status,
            0);
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    EXPECT_EQ(entry.path().string().find(".so"), std::string::npos) << entry.path();
  }
  const Output ran = run(jail() + " --rootfs " + root.string() + " -- " + binary.string());
  EXPECT_EQ(ran.status, 0) << ran.text;
  EXPECT_EQ(ran.text, "static ok\n");
}

// A library next to the binary, found through DT_RUNPATH $ORIGIN/../lib; and the same binary
// when the library is gone fails the build with the library's name.
TEST(RootfsBuild, OriginRunpathResolvesAndAMissingLibraryIsNamed) {
  TempDir dir;
  const fs::path app = dir.path() / "app";
  fs::create_directories(app / "bin");
  fs::create_directories(app / "lib");
  write(dir.path() / "greet.c", "const char* greet(void){return \"hello from libgreet\";}\n");
  write(dir.path() / "main.c",
        "#include <stdio.h>\nconst char* greet(void);\nint main(void){puts(greet());return 0;}\n");
  ASSERT_EQ(run("gcc -shared -fPIC -o " + (app / "lib/libgreet.so").string() + " " +
                (dir.path() / "greet.c").string())
                .status,
            0);
  const Output link = run("gcc -o " + (app / "bin/greeter").string() + " " +
                          (dir.path() / "main.c").string() + " -L" + (app / "lib").string() +
                          " -lgreet -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib'");
  ASSERT_EQ(link.status, 0) << link.text;
  const auto info = jail::rootfs::read_elf(app / "bin/greeter");
  ASSERT_TRUE(info.has_value());
  ASSERT_EQ(info->runpath.size(), 1u);
  EXPECT_EQ(info->runpath.front(), "$ORIGIN/../lib");

  const fs::path root = dir.path() / "root";
  const Output build = run(jail() + " rootfs build " + root.string() + " --binary " +
                           (app / "bin/greeter").string());
  ASSERT_EQ(build.status, 0) << build.text;
  EXPECT_TRUE(fs::exists(root / (app / "lib/libgreet.so").relative_path()));
  const Output ran =
      run(jail() + " --rootfs " + root.string() + " -- " + (app / "bin/greeter").string());
  EXPECT_EQ(ran.status, 0) << ran.text;
  EXPECT_EQ(ran.text, "hello from libgreet\n");

  fs::remove(app / "lib/libgreet.so");
  const Output missing = run(jail() + " rootfs build " + (dir.path() / "root2").string() +
                             " --binary " + (app / "bin/greeter").string());
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.text.find("libgreet.so"), std::string::npos) << missing.text;
}

TEST(RootfsBuild, BadInputIsNamed) {
  TempDir dir;
  const std::string out = (dir.path() / "root").string();
  const Output not_elf = run(jail() + " rootfs build " + out + " --binary /etc/passwd");
  EXPECT_EQ(not_elf.status, 1);
  EXPECT_NE(not_elf.text.find("/etc/passwd is not an ELF executable"), std::string::npos)
      << not_elf.text;

  const Output absent = run(jail() + " rootfs build " + out + " --binary no-such-tool-anywhere");
  EXPECT_EQ(absent.status, 1);
  EXPECT_NE(absent.text.find("no-such-tool-anywhere"), std::string::npos) << absent.text;

  write(dir.path() / "typo.toml", "binaries = [\"sh\"]\nbinarys = [\"ls\"]\n");
  const Output typo =
      run(jail() + " rootfs build " + out + " --recipe " + (dir.path() / "typo.toml").string());
  EXPECT_EQ(typo.status, 1);
  EXPECT_NE(typo.text.find("typo.toml:2:"), std::string::npos) << typo.text;
  EXPECT_NE(typo.text.find("unknown key 'binarys'"), std::string::npos) << typo.text;

  const Output unknown = run(jail() + " rootfs build " + out + " --recipe no-such-recipe");
  EXPECT_EQ(unknown.status, 1);
  EXPECT_NE(unknown.text.find("python3"), std::string::npos) << unknown.text;  // lists what exists
}

TEST(RootfsBuild, SameInputsGiveTheSameTree) {
  TempDir dir;
  auto listing = [&](const fs::path& root) {
    std::string text;
    std::vector<std::string> names;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      names.push_back(fs::relative(entry.path(), root).string() +
                      (entry.is_symlink() ? " -> " + fs::read_symlink(entry.path()).string() : ""));
    }
    std::sort(names.begin(), names.end());
    for (const auto& name : names) text += name + "\n";
    return text;
  };
  ASSERT_EQ(run(jail() + " rootfs build " + (dir.path() / "a").string() + " --recipe shell").status,
            0);
  ASSERT_EQ(run(jail() + " rootfs build " + (dir.path() / "b").string() + " --recipe shell").status,
            0);
  EXPECT_EQ(listing(dir.path() / "a"), listing(dir.path() / "b"));
}

}  // namespace
