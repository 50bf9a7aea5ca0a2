// --rootfs DIR: a prepared root replaces the host-minimal one, still read-only, still isolated.
#include <gtest/gtest.h>

#include <filesystem>

#include "run_jail.hpp"

namespace jail_test {
namespace {

namespace fs = std::filesystem;

// A tiny root: dash as /bin/sh with the C library and loader it needs, a marker file, and the
// usual mount points.
class Rootfs : public CallerTest {
 protected:
  void SetUp() override {
    const fs::path r = root_.path();
    for (const char* dir : {"bin", "lib/x86_64-linux-gnu", "lib64", "proc", "dev", "tmp", "etc"}) {
      fs::create_directories(r / dir);
    }
    fs::copy_file("/usr/bin/dash", r / "bin/sh");
    fs::copy_file(fs::canonical("/lib/x86_64-linux-gnu/libc.so.6"),
                  r / "lib/x86_64-linux-gnu/libc.so.6");
    fs::copy_file(fs::canonical("/lib64/ld-linux-x86-64.so.2"), r / "lib64/ld-linux-x86-64.so.2");
    write_file(root_ / "marker", "from-rootfs\n");
    for (const auto& entry : fs::recursive_directory_iterator(r)) {
      fs::permissions(entry.path(), entry.is_directory() || entry.path().filename() != "marker"
                                        ? fs::perms(0755)
                                        : fs::perms(0644));
    }
  }

  TempDir root_;
};

TEST_P(Rootfs, RunsInThePreparedRoot) {
  RunResult r = run({"--rootfs", root_.path(), "--no-cwd", "--", "/bin/sh", "-c",
                     "read x < /marker; echo \"$x\"; test -e /usr/bin/python3 || echo no-host-usr;"
                     " test -e /etc/shadow || echo no-shadow; echo $PPID"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "from-rootfs\nno-host-usr\nno-shadow\n1\n") << describe(r);
}

TEST_P(Rootfs, CommandIsFoundOnThePathInsideTheRootfs) {
  RunResult r = run({"--rootfs", root_.path(), "--no-cwd", "--", "sh", "-c", "exit 6"});
  EXPECT_EQ(r.exit_code, 6) << describe(r);
}

TEST_P(Rootfs, PreparedRootIsReadOnly) {
  RunResult r =
      run({"--rootfs", root_.path(), "--no-cwd", "--", "/bin/sh", "-c", "echo x > /newfile"});
  EXPECT_NE(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.err.find("Read-only file system"), std::string::npos) << describe(r);
  EXPECT_FALSE(fs::exists(root_ / "newfile")) << "a write reached the prepared root";
}

TEST_P(Rootfs, StillIsolated) {
  RunResult r = run({"--rootfs", root_.path(), "--no-cwd", "--", "/bin/sh", "-c",
                     "echo $$; read h < /proc/sys/kernel/hostname; echo \"$h\";"
                     " echo x > /tmp/f && echo tmp-ok"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::vector<std::string> lines = split_lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << describe(r);
  EXPECT_LT(std::stol(lines[0]), 10) << describe(r);
  EXPECT_EQ(lines[1], "jail") << describe(r);
  EXPECT_EQ(lines[2], "tmp-ok") << describe(r);
}

JAIL_INSTANTIATE_FOR_CALLERS(Rootfs);

}  // namespace
}  // namespace jail_test
