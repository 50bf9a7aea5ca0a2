// Parsing of /proc/self/mountinfo, /proc/self/cgroup and the cgroupfs text formats, fed with
// strings copied from real hosts (hybrid, pure v2, co-mounted v1, cgroup namespaces).
#include <unistd.h>

#include <gtest/gtest.h>

#include "../../jail/src/cgroup/cgroup.hpp"
#include "../../jail/src/cgroup/files.hpp"

namespace jail::cgroup {
namespace {

// This machine: v1 controllers, each in its own hierarchy, plus a controller-less cgroup2.
constexpr std::string_view kHybridMountinfo =
    "22 1 253:0 / / rw,relatime - ext4 /dev/vda rw\n"
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
constexpr std::string_view kHybridCgroup =
    "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/4cfc\n2:cpuacct:/\n1:cpu:/\n0::/\n";

TEST(CgroupParse, HybridHost) {
  const Layout l = parse_layout(kHybridMountinfo, kHybridCgroup);
  EXPECT_EQ(l.mode, Mode::hybrid);
  ASSERT_EQ(l.v1.size(), 4u);  // name=systemd carries no controller and is skipped
  const Hierarchy* mem = l.v1_with("memory");
  ASSERT_NE(mem, nullptr);
  EXPECT_EQ(mem->own_path, "/process_api/4cfc");
  EXPECT_EQ(mem->own_dir, "/sys/fs/cgroup/memory/process_api/4cfc");
  ASSERT_NE(l.v1_with("pids"), nullptr);
  EXPECT_EQ(l.v1_with("pids")->own_dir, "/sys/fs/cgroup/pids");
  EXPECT_NE(l.v1_with("cpu"), l.v1_with("cpuacct"));
  EXPECT_EQ(l.v1_with("freezer"), nullptr);
  ASSERT_TRUE(l.v2.has_value());
  EXPECT_EQ(l.v2->own_dir, "/sys/fs/cgroup/unified");
}

TEST(CgroupParse, PureV2Host) {
  const Layout l = parse_layout(
      "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
      "rw,nsdelegate,memory_recursiveprot\n",
      "0::/user.slice/user-1000.slice/session-2.scope\n");
  EXPECT_EQ(l.mode, Mode::v2);
  EXPECT_TRUE(l.v1.empty());
  ASSERT_TRUE(l.v2.has_value());
  EXPECT_EQ(l.v2->own_dir, "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope");
  EXPECT_EQ(l.v2->dir_of("/"), "/sys/fs/cgroup");
}

TEST(CgroupParse, CoMountedV1) {
  const Layout l = parse_layout(
      "25 24 0:22 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:7 - cgroup cgroup "
      "rw,cpu,cpuacct\n"
      "26 24 0:23 / /sys/fs/cgroup/memory rw shared:8 - cgroup cgroup rw,memory\n",
      "5:cpu,cpuacct:/user.slice\n3:memory:/user.slice\n1:name=systemd:/user.slice\n");
  EXPECT_EQ(l.mode, Mode::v1);
  ASSERT_EQ(l.v1.size(), 2u);
  EXPECT_EQ(l.v1_with("cpu"), l.v1_with("cpuacct"));
  EXPECT_EQ(l.v1_with("cpu")->own_dir, "/sys/fs/cgroup/cpu,cpuacct/user.slice");
}

TEST(CgroupParse, MountShowingPartOfTheHierarchy) {
  // Inside a container the mount shows only the container's subtree (field 4 is not "/").
  const Layout l =
      parse_layout("40 30 0:26 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 rw\n",
                   "0::/docker/abc/inner\n");
  ASSERT_TRUE(l.v2.has_value());
  EXPECT_EQ(l.v2->own_dir, "/sys/fs/cgroup/inner");
  EXPECT_EQ(l.v2->dir_of("/docker/abc"), "/sys/fs/cgroup");
  EXPECT_EQ(l.v2->dir_of("/docker/abcd"), "");  // a sibling, not below the mount root
  EXPECT_EQ(l.v2->dir_of("/elsewhere"), "");
}

TEST(CgroupParse, EscapedMountPoint) {
  const Layout l =
      parse_layout("40 30 0:26 / /mnt/my\\040cgroups rw - cgroup2 cgroup2 rw\n", "0::/a\n");
  ASSERT_TRUE(l.v2.has_value());
  EXPECT_EQ(l.v2->own_dir, "/mnt/my cgroups/a");
}

TEST(CgroupParse, NoCgroups) {
  const Layout l = parse_layout("22 1 253:0 / / rw - ext4 /dev/vda rw\n", "");
  EXPECT_EQ(l.mode, Mode::none);
  EXPECT_FALSE(l.v2.has_value());
}

TEST(CgroupParse, KeyedFiles) {
  constexpr std::string_view cpu_stat =
      "usage_usec 1523456\nuser_usec 1200000\nsystem_usec 323456\nnr_periods 10\n"
      "nr_throttled 4\nthrottled_usec 90000\n";
  EXPECT_EQ(files::keyed(cpu_stat, "user_usec"), 1200000u);
  EXPECT_EQ(files::keyed(cpu_stat, "system_usec"), 323456u);
  EXPECT_EQ(files::keyed(cpu_stat, "usage"), std::nullopt);  // a prefix is not the key
  constexpr std::string_view memory_events =
      "low 0\nhigh 0\nmax 17\noom 1\noom_kill 1\noom_group_kill 0\n";
  EXPECT_EQ(files::keyed(memory_events, "oom_kill"), 1u);
  EXPECT_EQ(files::keyed(memory_events, "max"), 17u);
  EXPECT_EQ(files::keyed("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", "oom_kill"), 3u);
  EXPECT_EQ(files::keyed("max 0\n", "max"), 0u);
  EXPECT_EQ(files::keyed("populated 1\nfrozen 0", "frozen"), 0u);  // no final newline
}

TEST(CgroupParse, NumbersAndWords) {
  EXPECT_EQ(files::number("67108864\n"), 67108864u);
  EXPECT_EQ(files::number("max\n"), std::nullopt);
  EXPECT_EQ(files::number(""), std::nullopt);
  EXPECT_EQ(files::words("cpuset cpu io memory pids\n"),
            (std::vector<std::string>{"cpuset", "cpu", "io", "memory", "pids"}));
  EXPECT_TRUE(files::words("\n").empty());
}

TEST(CgroupParse, UniqueNames) {
  const std::string a = files::unique_name();
  const std::string b = files::unique_name();
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind("jail-" + std::to_string(::getpid()) + "-", 0), 0u);
  EXPECT_EQ(a.size(), b.size());
}

}  // namespace
}  // namespace jail::cgroup
