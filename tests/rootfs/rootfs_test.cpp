// The rootfs builder end to end, through the real binary: build a root, run tools in it with
// `jail --rootfs`, and check what the root holds.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>

#include "../support/shell_quote.hpp"
#include "rootfs/builder.hpp"
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

// As a word of a shell command line (run() goes through popen).
std::string jail() {
  return jail_test::shell_quote(JAIL_BINARY);
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

// A string no file holds by chance: what a test's secret file says.
std::string unique_secret() {
  std::random_device random;
  return "jail-rootfs-secret-" + std::to_string(::getpid()) + "-" + std::to_string(random()) +
         std::to_string(random());
}

// A directory (and a file in it) only root can read, as a tool's output directory would link to:
// `dir`/secretdir 0700 holding f 0600 that says `secret`.
fs::path root_only_file(const fs::path& dir, const std::string& secret) {
  const fs::path secret_dir = dir / "secretdir";
  fs::create_directories(secret_dir);
  fs::permissions(secret_dir, fs::perms::owner_all);
  write(secret_dir / "f", secret + "\n");
  fs::permissions(secret_dir / "f", fs::perms::owner_read | fs::perms::owner_write);
  return secret_dir / "f";
}

// Whether any file in `root` holds `text`, as grep finds it (-r: symlinks are not followed, or
// a link in the root would lead grep to the host's file).
bool holds_text(const fs::path& root, const std::string& text) {
  const Output grep = run("grep -r -F -l -- " + jail_test::shell_quote(text) + " " +
                          jail_test::shell_quote(root.string()));
  EXPECT_NE(grep.status, 2) << grep.text;
  return grep.status == 0;
}

mode_t mode_of(const fs::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return 0;
  return info.st_mode & 07777;
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
  const Output hello =
      run(jail() + " --rootfs " + root.string() + " --ro-bind " +
          jail_test::shell_quote(examples + ":/tmp/ex") + " --cwd /tmp/ex -- python3 hello.py");
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

// A build writes only inside the root it makes: the generated /etc never goes into a host file
// a --file or --tree placed there (a hard link), and a recipe's links never lead out of the root.
TEST(RootfsBuild, NothingOutsideTheRootIsWritten) {
  TempDir dir;
  // The host's /etc is a copy of the test's own, in a mount namespace of the test's own: the
  // build hard-links its hosts file into a root beside it, on the same filesystem.
  fs::create_directories(dir.path() / "etc");
  write(dir.path() / "etc/hosts", "10.0.0.5 precious-host-entry\n");
  const Output etc = run("unshare --mount --propagation private sh -c 'mount --bind " +
                         (dir.path() / "etc").string() + " /etc && \"" + JAIL_BINARY + "\"" +
                         " rootfs build /etc/out --binary true --file /etc/hosts && cat " +
                         "/etc/out/etc/hosts /etc/hosts'");
  EXPECT_EQ(etc.status, 0) << etc.text;
  EXPECT_NE(etc.text.find("built /etc/out"), std::string::npos) << etc.text;
  EXPECT_EQ(etc.text.substr(etc.text.find('\n') + 1),
            "10.0.0.5 precious-host-entry\n10.0.0.5 precious-host-entry\n")
      << "the caller's /etc/hosts is the root's, and the host's is whole";

  const fs::path outside = dir.path() / "outside";
  fs::create_directories(outside);
  write(outside / "victim", "important\n");
  write(dir.path() / "links.toml", "binaries = [\"true\"]\n[links]\n\"/a\" = \"" +
                                       outside.string() + "\"\n\"/a/victim\" = \"gotcha\"\n");
  const Output through = run(jail() + " rootfs build " + (dir.path() / "r1").string() +
                             " --recipe " + (dir.path() / "links.toml").string());
  EXPECT_EQ(through.status, 1) << through.text;
  write(dir.path() / "up.toml", "binaries = [\"true\"]\n[links]\n\"/../victim\" = \"gotcha\"\n");
  const Output up = run(jail() + " rootfs build " + (outside / "r2").string() + " --recipe " +
                        (dir.path() / "up.toml").string());
  EXPECT_EQ(up.status, 1) << up.text;
  EXPECT_NE(up.text.find("may not go up with '..'"), std::string::npos) << up.text;
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(outside / "victim")));
  std::ifstream victim(outside / "victim");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(victim), {}), "important\n");
  EXPECT_FALSE(fs::exists(dir.path() / "r1")) << "a failed build leaves no root";
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename().string().find(".building"), std::string::npos)
        << entry.path() << " left by a failed build";
  }
}

TEST(RootfsBuild, AnOutThatHoldsSomethingIsOnlyEverReplacedAsABuiltRoot) {
  TempDir dir;
  const std::string root = (dir.path() / "root").string();
  ASSERT_EQ(run(jail() + " rootfs build " + root + " --binary true").status, 0);
  const Output again = run(jail() + " rootfs build " + root + " --binary false");
  EXPECT_EQ(again.status, 1) << again.text;
  EXPECT_NE(again.text.find("exists and is not empty"), std::string::npos) << again.text;
  EXPECT_FALSE(fs::exists(root + "/usr/bin/false"));
  const Output replaced = run(jail() + " rootfs build " + root + " --binary false --replace");
  EXPECT_EQ(replaced.status, 0) << replaced.text;
  EXPECT_TRUE(fs::exists(root + "/usr/bin/false"));
  EXPECT_FALSE(fs::exists(root + "/usr/bin/true")) << "the new root replaces the old whole";

  const fs::path project = dir.path() / "project";
  fs::create_directories(project / "etc");
  write(project / "etc/hosts", "my config\n");
  const Output mine =
      run(jail() + " rootfs build " + project.string() + " --binary true --replace");
  EXPECT_EQ(mine.status, 1) << mine.text;
  EXPECT_NE(mine.text.find("is not a root jail rootfs build made"), std::string::npos) << mine.text;
  std::ifstream kept(project / "etc/hosts");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "my config\n");
  // A tree with a root's shape (a chroot: proc, dev, tmp, etc/passwd) is someone's data too; it
  // was taken for a built root and removed.
  const fs::path chroot = dir.path() / "chroot";
  for (const char* sub : {"proc", "dev", "tmp", "etc", "home/alice"})
    fs::create_directories(chroot / sub);
  write(chroot / "etc/passwd", "alice:x:1000:1000::/home/alice:/bin/sh\n");
  write(chroot / "home/alice/thesis.txt", "years of work\n");
  const Output shaped =
      run(jail() + " rootfs build " + chroot.string() + " --binary true --replace");
  EXPECT_EQ(shaped.status, 1) << shaped.text;
  EXPECT_NE(shaped.text.find("has no .jail-rootfs mark"), std::string::npos) << shaped.text;
  EXPECT_TRUE(fs::exists(chroot / "home/alice/thesis.txt"));

  const Output slash = run(jail() + " rootfs build / --binary true --replace");
  EXPECT_EQ(slash.status, 1) << slash.text;
  EXPECT_NE(slash.text.find("over /"), std::string::npos) << slash.text;
}

// --replace checked OUT once, before a build that can take minutes: whatever was at OUT when the
// build ended was removed, even what someone put there meanwhile.
TEST(RootfsBuild, AnOutChangedDuringTheBuildIsNotRemoved) {
  TempDir dir;
  const std::string root = (dir.path() / "root").string();
  ASSERT_EQ(run(jail() + " rootfs build " + root + " --binary true").status, 0);
  // Enough files that the build lasts long past the moment the test sees it start.
  const fs::path tree = dir.path() / "tree";
  fs::create_directories(tree);
  for (int i = 0; i < 30000; ++i) std::ofstream(tree / ("f" + std::to_string(i)));
  Output build;
  std::thread builder([&] {
    build = run(jail() + " rootfs build " + root + " --tree " + tree.string() + " --replace");
  });
  const auto building = [&] {
    for (const auto& entry : fs::directory_iterator(dir.path()))
      if (entry.path().filename().string().starts_with(".root.building-")) return true;
    return false;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!building() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  const bool seen = building();
  // Someone takes the directory over while the build goes on.
  fs::remove(root + "/.jail-rootfs");
  write(root + "/precious", "not a root any more\n");
  builder.join();
  ASSERT_TRUE(seen) << "the build was not seen to start\n" << build.text;
  EXPECT_EQ(build.status, 1) << build.text;
  EXPECT_NE(build.text.find("changed during the build"), std::string::npos) << build.text;
  EXPECT_TRUE(fs::exists(root + "/precious")) << build.text;
  EXPECT_FALSE(building()) << "the new root is not left beside OUT";
}

// No file in a root is set-uid or set-gid: a copy owned by the builder (root) would be a new
// set-uid program on the host, and a hard link would keep the old one past the host's upgrade.
TEST(RootfsBuild, SetIdProgramsComeWithoutTheirBits) {
  TempDir dir;
  const fs::path root = dir.path() / "root";
  const Output build = run(jail() + " rootfs build " + root.string() + " --binary su");
  ASSERT_EQ(build.status, 0) << build.text;
  const fs::path su = fs::canonical("/usr/bin/su");
  ASSERT_TRUE((fs::status(su).permissions() & fs::perms::set_uid) != fs::perms::none)
      << su << " is expected set-uid on Debian 12";
  const fs::path copy = root / su.relative_path();
  ASSERT_TRUE(fs::is_regular_file(copy));
  EXPECT_EQ(fs::status(copy).permissions() & (fs::perms::set_uid | fs::perms::set_gid),
            fs::perms::none);
  EXPECT_FALSE(fs::equivalent(copy, su)) << "a hard link to the host's set-uid file";
  const Output ran = run(jail() + " --rootfs " + root.string() + " -- " + su.string() + " --help");
  EXPECT_EQ(ran.status, 0) << ran.text;
}

// Trees and files are taken as given: a relative tree lands where it is on the host; another
// machine's ELF file and a looping link in a tree are data; a directory as a file, and content
// the jail's own /tmp would hide, are refused by name.
TEST(RootfsBuild, TreesAndFilesAreTakenAsGiven) {
  TempDir dir;
  const fs::path tree = dir.path() / "src/tree";
  fs::create_directories(tree / "sub");
  write(tree / "sub/data", "data\n");
  // An ELF header for another machine (EM_AARCH64) on an otherwise empty file.
  write(tree / "firmware.img", std::string("\x7f"
                                           "ELF\x02\x01\x01",
                                           7) +
                                   std::string(9, '\0') + std::string("\x02\x00\xb7\x00", 4) +
                                   std::string(48, '\0'));
  fs::create_symlink("loop", tree / "loop");
  fs::create_directories(dir.path() / "work/here");
  const fs::path root = dir.path() / "root";
  const Output build =
      run("cd " + (dir.path() / "work/here").string() + " && " + jail() + " rootfs build " +
          root.string() + " --binary true --tree ../../src/tree");
  ASSERT_EQ(build.status, 0) << build.text;
  EXPECT_TRUE(fs::is_regular_file(root / (tree / "sub/data").relative_path()));
  EXPECT_TRUE(fs::is_regular_file(root / (tree / "firmware.img").relative_path()));
  EXPECT_TRUE(fs::is_symlink(root / (tree / "loop").relative_path()));

  const Output directory = run(jail() + " rootfs build " + (dir.path() / "r2").string() +
                               " --binary true --file " + tree.string());
  EXPECT_EQ(directory.status, 1) << directory.text;
  EXPECT_NE(directory.text.find("is a directory; give it as a tree"), std::string::npos)
      << directory.text;
  const Output hidden =
      run(jail() + " rootfs build " + (dir.path() / "r3").string() + " --binary true --file /tmp");
  EXPECT_EQ(hidden.status, 1) << hidden.text;
  char name[] = "/tmp/jail-test-rootfs-hidden-XXXXXX";
  const int fd = ::mkstemp(name);
  ASSERT_GE(fd, 0);
  ::close(fd);
  const Output under_tmp = run(jail() + " rootfs build " + (dir.path() / "r4").string() +
                               " --binary true --file " + name);
  fs::remove(name);
  EXPECT_EQ(under_tmp.status, 1) << under_tmp.text;
  EXPECT_NE(under_tmp.text.find("where jail mounts its own /tmp"), std::string::npos)
      << under_tmp.text;
}

// A library only the host's loader cache finds (a directory in /etc/ld.so.conf.d, as CUDA's) is
// found in the root too, which has no cache. The test's cache is made by ldconfig in a mount
// namespace whose /var/cache/ldconfig is a tmpfs: ldconfig rewrites its aux cache whatever -C.
TEST(RootfsBuild, ALibraryOnlyTheCacheFindsLoadsInTheRoot) {
  TempDir dir;
  const fs::path lib = dir.path() / "vendor/lib";
  fs::create_directories(lib);
  write(dir.path() / "l.c", "int vendor_value(void){return 42;}\n");
  write(dir.path() / "m.c",
        "#include <stdio.h>\nint vendor_value(void);\n"
        "int main(void){printf(\"%d\\n\", vendor_value());return 0;}\n");
  ASSERT_EQ(run("gcc -shared -fPIC -Wl,-soname,libjailvendor.so.1 -o " +
                (lib / "libjailvendor.so.1").string() + " " + (dir.path() / "l.c").string())
                .status,
            0);
  const fs::path program = dir.path() / "uses-vendor";
  const Output link = run("gcc -o " + program.string() + " " + (dir.path() / "m.c").string() + " " +
                          (lib / "libjailvendor.so.1").string());
  ASSERT_EQ(link.status, 0) << link.text;
  write(dir.path() / "ld.so.conf", lib.string() + "\n");
  const fs::path cache = dir.path() / "ld.so.cache";
  const Output ldconfig =
      run("unshare --mount --propagation private sh -c 'mount -t tmpfs none "
          "/var/cache/ldconfig && ldconfig -C " +
          cache.string() + " -f " + (dir.path() / "ld.so.conf").string() + "'");
  ASSERT_EQ(ldconfig.status, 0) << ldconfig.text;

  jail::rootfs::BuildRequest request;
  request.out = dir.path() / "root";
  request.binaries = {program.string()};
  request.ld_so_cache = cache;
  (void)jail::rootfs::build_rootfs(request);
  const Output ran = run(jail() + " --rootfs " + request.out.string() + " -- " + program.string());
  EXPECT_EQ(ran.status, 0) << ran.text;
  EXPECT_EQ(ran.text, "42\n");
}

// A tool wrote `config-link -> <root's file>` into its output directory, and a later build of that
// directory as a tree copied root's file into the root. A link in a tree is copied as a link, its
// text unchanged, and what it names is never read: whether a file only root can read (by an
// absolute or a relative link) or a directory outside (never descended into), shared with the
// host or copied.
TEST(RootfsBuild, ATreesLinksAreCopiedAsLinksAndNeverFollowed) {
  TempDir dir;
  const std::string secret = unique_secret();
  const fs::path file = root_only_file(dir.path(), secret);
  const fs::path outside = dir.path() / "outside";
  fs::create_directories(outside / "deeper");
  const std::string outside_text = unique_secret();
  write(outside / "inner", outside_text + "\n");
  write(outside / "deeper/more", outside_text + "\n");
  const fs::path tree = dir.path() / "tree";
  fs::create_directories(tree / "sub");
  write(tree / "sub/own", "the tree's own\n");
  fs::create_symlink(file, tree / "config-link");
  fs::create_symlink("../secretdir/f", tree / "relative-link");
  fs::create_symlink(outside, tree / "dir-link");
  fs::create_symlink("../../outside", tree / "sub/up-link");
  for (const std::string copy : {"", " --copy"}) {
    const fs::path root = dir.path() / (copy.empty() ? "root" : "root-copied");
    const Output build =
        run(jail() + " rootfs build " + root.string() + " --tree " + tree.string() + copy);
    ASSERT_EQ(build.status, 0) << build.text;
    const fs::path in_root = root / tree.relative_path();
    EXPECT_TRUE(fs::is_regular_file(in_root / "sub/own")) << copy;
    for (const auto& [name, text] :
         std::vector<std::pair<std::string, fs::path>>{{"config-link", file},
                                                       {"relative-link", "../secretdir/f"},
                                                       {"dir-link", outside},
                                                       {"sub/up-link", "../../outside"}}) {
      EXPECT_TRUE(fs::is_symlink(in_root / name)) << name << copy;
      EXPECT_EQ(fs::read_symlink(in_root / name), text) << name << copy;
    }
    EXPECT_FALSE(holds_text(root, secret)) << "root's file was copied into the root" << copy;
    EXPECT_FALSE(fs::exists(fs::symlink_status(root / file.relative_path()))) << copy;
    EXPECT_FALSE(holds_text(root, outside_text)) << "a linked directory was descended" << copy;
    EXPECT_FALSE(fs::exists(fs::symlink_status(root / outside.relative_path()))) << copy;
  }
}

// What a tree's ELF file names is no way around that: a library it needs by a path only root
// can read is refused by name, and one its RUNPATH finds through a link in the tree is the
// tree's link, not the file it leads to.
TEST(RootfsBuild, ATreesProgramBringsInNothingOnlyRootCanRead) {
  TempDir dir;
  const std::string secret = unique_secret();
  const fs::path secret_dir = dir.path() / "secretdir";
  fs::create_directories(secret_dir);
  write(dir.path() / "s.c", "const char* secret(void){return \"" + secret + "\";}\n");
  write(dir.path() / "m.c",
        "#include <stdio.h>\nconst char* secret(void);\n"
        "int main(void){puts(secret());return 0;}\n");
  // No soname: a program linked with it names it by the path it was given.
  ASSERT_EQ(run("gcc -shared -fPIC -o " + (secret_dir / "libsecret.so").string() + " " +
                (dir.path() / "s.c").string())
                .status,
            0);
  const fs::path tree = dir.path() / "tree";
  fs::create_directories(tree / "bin");
  const Output by_path =
      run("gcc -o " + (tree / "bin/by-path").string() + " " + (dir.path() / "m.c").string() + " " +
          (secret_dir / "libsecret.so").string());
  ASSERT_EQ(by_path.status, 0) << by_path.text;
  fs::permissions(secret_dir, fs::perms::owner_all);
  fs::permissions(secret_dir / "libsecret.so", fs::perms::owner_read | fs::perms::owner_write);
  const fs::path root = dir.path() / "root";
  const Output refused =
      run(jail() + " rootfs build " + root.string() + " --tree " + tree.string());
  EXPECT_EQ(refused.status, 1) << refused.text;
  EXPECT_NE(refused.text.find("needs " + (secret_dir / "libsecret.so").string() +
                              ", which only root can read on this host"),
            std::string::npos)
      << refused.text;
  EXPECT_FALSE(fs::exists(root));
  EXPECT_FALSE(holds_text(dir.path() / "tree", secret));

  // The same library by soname, found through RUNPATH $ORIGIN/../lib where lib is a link out.
  fs::remove(tree / "bin/by-path");
  fs::permissions(secret_dir, fs::perms::owner_all | fs::perms::others_exec);
  const Output soname_lib =
      run("gcc -shared -fPIC -Wl,-soname,libsecret.so -o " +
          (secret_dir / "libsecret.so").string() + " " + (dir.path() / "s.c").string());
  ASSERT_EQ(soname_lib.status, 0) << soname_lib.text;
  const Output by_runpath =
      run("gcc -o " + (tree / "bin/by-runpath").string() + " " + (dir.path() / "m.c").string() +
          " -L" + secret_dir.string() + " -lsecret -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib'");
  ASSERT_EQ(by_runpath.status, 0) << by_runpath.text;
  fs::permissions(secret_dir, fs::perms::owner_all);
  fs::create_symlink(secret_dir, tree / "lib");
  const Output built = run(jail() + " rootfs build " + root.string() + " --tree " + tree.string());
  ASSERT_EQ(built.status, 0) << built.text;
  EXPECT_TRUE(fs::is_symlink(root / (tree / "lib").relative_path()));
  EXPECT_FALSE(holds_text(root, secret)) << "the library was read through the tree's link";
  EXPECT_FALSE(fs::exists(fs::symlink_status(root / secret_dir.relative_path())));
}

// A directory made in the root has the mode of the host directory it mirrors: a tree's 0700
// directory, and a 0700 directory on the way to the tree, were made 0755.
TEST(RootfsBuild, DirectoriesKeepTheHostsModes) {
  TempDir dir;
  const fs::path closed = dir.path() / "closed";
  const fs::path tree = closed / "tree";
  fs::create_directories(tree / "private/inner");
  fs::create_directories(tree / "group");
  fs::create_directories(tree / "read-only");
  write(tree / "private/inner/f", "f\n");
  write(tree / "read-only/f", "f\n");
  fs::permissions(tree / "private", fs::perms::owner_all);
  fs::permissions(tree / "group",
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  fs::permissions(tree / "read-only", fs::perms::owner_read | fs::perms::owner_exec |
                                          fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(closed, fs::perms::owner_all);
  const fs::path root = dir.path() / "root";
  const Output build =
      run(jail() + " rootfs build " + root.string() + " --binary cat --tree " + tree.string());
  ASSERT_EQ(build.status, 0) << build.text;
  const auto in_root = [&](const fs::path& path) { return root / path.relative_path(); };
  EXPECT_EQ(mode_of(in_root(closed)), 0700u);
  EXPECT_EQ(mode_of(in_root(tree / "private")), 0700u);
  EXPECT_EQ(mode_of(in_root(tree / "private/inner")), mode_of(tree / "private/inner"));
  EXPECT_EQ(mode_of(in_root(tree / "group")), 0750u);
  EXPECT_EQ(mode_of(in_root(tree / "read-only")), 0505u);
  EXPECT_EQ(mode_of(in_root(tree)), mode_of(tree));
  EXPECT_EQ(mode_of(in_root(dir.path())), 0755u);
  EXPECT_TRUE(fs::is_regular_file(in_root(tree / "private/inner/f")));
  EXPECT_TRUE(fs::is_regular_file(in_root(tree / "read-only/f")));
  // The tool (not root in the jail) is kept out of the 0700 directory as it is on the host.
  const Output reads =
      run(jail() + " --rootfs " + root.string() + " -- cat " + (tree / "private/inner/f").string());
  EXPECT_NE(reads.status, 0) << reads.text;
  EXPECT_NE(reads.text.find("Permission denied"), std::string::npos) << reads.text;
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

  // A path is the caller's own file: named as missing, not answered with the shipped list.
  const Output missing_file =
      run(jail() + " rootfs build " + out + " --recipe " + (dir.path() / "nope.toml").string());
  EXPECT_EQ(missing_file.status, 1) << missing_file.text;
  EXPECT_NE(missing_file.text.find("recipe file " + (dir.path() / "nope.toml").string() +
                                   " does not exist"),
            std::string::npos)
      << missing_file.text;
  const Output library = run(jail() + " rootfs build " + out + " --library libnone-such.so.9");
  EXPECT_EQ(library.status, 1) << library.text;
  EXPECT_NE(library.text.find("library libnone-such.so.9 is not on this host"), std::string::npos)
      << library.text;
  EXPECT_EQ(library.text.find("from the recipe"), std::string::npos) << library.text;

  const Output long_name =
      run(jail() + " rootfs build " + out + " --recipe " + std::string(300, 'a'));
  EXPECT_EQ(long_name.status, 1) << long_name.text;
  EXPECT_NE(long_name.text.find("no recipe aaa"), std::string::npos) << long_name.text;
  const Output directory =
      run(jail() + " rootfs build " + out + " --recipe " + dir.path().string());
  EXPECT_EQ(directory.status, 1) << directory.text;
  EXPECT_NE(directory.text.find("is a directory"), std::string::npos) << directory.text;
  write(dir.path() / "links.toml", "binaries = [\"true\"]\nlinks = [\"/usr/bin/x\"]\n");
  const Output links =
      run(jail() + " rootfs build " + out + " --recipe " + (dir.path() / "links.toml").string());
  EXPECT_EQ(links.status, 1) << links.text;
  EXPECT_NE(links.text.find("links.toml:2:9: 'links' must be a table"), std::string::npos)
      << links.text;
  const Output empty = run(jail() + " rootfs build " + out + " --binary ''");
  EXPECT_EQ(empty.status, 1) << empty.text;
  EXPECT_NE(empty.text.find("an empty --binary"), std::string::npos) << empty.text;
  EXPECT_FALSE(fs::exists(out)) << "a refused build leaves no root";
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
