// cgroup Groups against this machine's real cgroups: limits written, OOM, pids and cpu limits
// holding for a real child, accounting read back, kill and cleanup. The v1 tests run where the
// controllers live in v1 (v1 or hybrid, as here); cgroup_v2_test.cpp covers the unified side.
#include <grp.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <optional>
#include <sstream>

#include <gtest/gtest.h>

#include "cgroup_support.hpp"

namespace jail::cgroup {
namespace {

using testing::Child;
using testing::jail_cgroups;

constexpr uint64_t kMiB = 1024 * 1024;

std::string read_trimmed(const std::string& path) {
  std::string s = files::read(path).value_or("<unreadable>");
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// The mode, worked out independently of parse_layout() from the raw mountinfo text.
Mode mode_from_mountinfo() {
  std::ifstream in("/proc/self/mountinfo");
  bool v1_controllers = false, v2 = false;
  for (std::string line; std::getline(in, line);) {
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream rest(line.substr(dash + 3));
    std::string fstype, source, options;
    rest >> fstype >> source >> options;
    if (fstype == "cgroup2") v2 = true;
    if (fstype != "cgroup") continue;
    std::istringstream opts(options);
    for (std::string opt; std::getline(opts, opt, ',');) {
      for (const char* c : {"memory", "pids", "cpu", "cpuacct", "cpuset", "blkio", "devices"}) {
        if (opt == c) v1_controllers = true;
      }
    }
  }
  if (v1_controllers) return v2 ? Mode::hybrid : Mode::v1;
  return v2 ? Mode::v2 : Mode::none;
}

TEST(CgroupLayout, MatchesMountinfo) {
  const Layout layout = detect_layout();
  EXPECT_EQ(layout.mode, mode_from_mountinfo()) << layout.describe();
  std::cout << layout.describe();
  if (layout.mode == Mode::hybrid || layout.mode == Mode::v1) {
    // Our own cgroup per controller is where /proc/self/cgroup says.
    ASSERT_NE(layout.v1_with("memory"), nullptr);
    EXPECT_TRUE(files::exists(layout.v1_with("memory")->own_dir + "/memory.limit_in_bytes"));
  }
  if (::geteuid() == 0) {
    for (const auto& h : layout.v1) EXPECT_TRUE(h.writable) << h.own_dir;
  }
}

// Runs on the host's own layout: v1 controllers here (hybrid), the v2 back end on a pure-v2
// host such as the VM test. Each test counts jail's cgroups before and after.
class CgroupHost : public ::testing::Test {
 protected:
  void SetUp() override {
    layout_ = detect_layout();
    if (layout_.mode == Mode::none) GTEST_SKIP() << "no cgroups here";
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create cgroups";
    before_ = jail_cgroups(layout_);
  }
  void TearDown() override {
    if (!IsSkipped()) {
      EXPECT_EQ(jail_cgroups(layout_), before_) << "cgroups left behind";
    }
  }
  bool v2() const { return layout_.mode == Mode::v2; }
  // Where jail's cgroups for `controller` go: the caller's own cgroup in that hierarchy.
  std::string own_dir(std::string_view controller) const {
    if (v2()) return layout_.v2->own_dir;
    const Hierarchy* h = layout_.v1_with(controller);
    return h ? h->own_dir : std::string{};
  }

  Layout layout_;
  std::vector<std::string> before_;
};

TEST_F(CgroupHost, LimitsAreWrittenUnderOwnCgroups) {
  Group g = Group::create({.memory_bytes = 64 * kMiB, .pids = 32, .cpus = 0.5}, std::nullopt);
  const std::string mem = g.dir_for("memory");
  ASSERT_FALSE(mem.empty());
  EXPECT_EQ(mem.rfind(own_dir("memory") + "/jail-", 0), 0u) << mem;
  for (const auto& d : g.dirs()) EXPECT_TRUE(files::exists(d)) << d;
  if (v2()) {
    ASSERT_EQ(g.version(), 2);
    EXPECT_GE(g.v2_fd(), 0);
    EXPECT_EQ(read_trimmed(mem + "/memory.max"), std::to_string(64 * kMiB));
    if (files::exists(mem + "/memory.swap.max")) {
      EXPECT_EQ(read_trimmed(mem + "/memory.swap.max"), "0");
    }
    EXPECT_EQ(read_trimmed(mem + "/pids.max"), "32");
    EXPECT_EQ(read_trimmed(mem + "/cpu.max"), "50000 100000");
    return;
  }
  ASSERT_EQ(g.version(), 1);
  EXPECT_EQ(g.v2_fd(), -1);
  EXPECT_EQ(read_trimmed(mem + "/memory.limit_in_bytes"), std::to_string(64 * kMiB));
  if (files::exists(mem + "/memory.memsw.limit_in_bytes")) {
    EXPECT_EQ(read_trimmed(mem + "/memory.memsw.limit_in_bytes"), std::to_string(64 * kMiB));
  } else {
    EXPECT_EQ(read_trimmed(mem + "/memory.swappiness"), "0");
  }
  EXPECT_EQ(read_trimmed(g.dir_for("pids") + "/pids.max"), "32");
  EXPECT_EQ(read_trimmed(g.dir_for("cpu") + "/cpu.cfs_quota_us"), "50000");
  EXPECT_EQ(read_trimmed(g.dir_for("cpu") + "/cpu.cfs_period_us"), "100000");
  EXPECT_FALSE(g.dir_for("cpuacct").empty());  // accounting comes along
}

TEST_F(CgroupHost, MemoryBombIsOomKilled) {
  Group g = Group::create({.memory_bytes = 64 * kMiB, .pids = 64, .cpus = 1.0}, std::nullopt);
  Child child([](int) {
    const size_t total = 200 * kMiB;
    auto* p = static_cast<char*>(
        ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (p == MAP_FAILED) return 3;
    for (size_t i = 0; i < total; i += 4096) p[i] = 1;
    return 0;
  });
  g.attach(child.pid());
  child.go();
  const int status = child.wait();
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  const Usage u = g.usage();
  EXPECT_TRUE(u.oom_killed);
  EXPECT_TRUE(u.memory_limit_hit);
  ASSERT_TRUE(u.peak_memory_bytes.has_value());
  EXPECT_GT(*u.peak_memory_bytes, 32 * kMiB);
  EXPECT_LE(*u.peak_memory_bytes, 64 * kMiB);
  EXPECT_FALSE(u.pids_limit_hit);
}

TEST_F(CgroupHost, ForksStopAtThePidsLimit) {
  // The grandchildren are reparented to us when the child dies, so we can reap them.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  {
    Group g = Group::create({.pids = 16}, std::nullopt);
    Child child([](int out) {
      int n = 0;
      int err = 0;
      while (n < 1000) {
        const pid_t p = ::fork();
        if (p < 0) {
          err = errno;
          break;
        }
        if (p == 0) {
          ::pause();
          ::_exit(0);
        }
        ++n;
      }
      ::dprintf(out, "%d %d\n", n, err);
      ::pause();
      return 0;
    });
    g.attach(child.pid());
    child.go();
    int forked = -1, err = -1;
    std::istringstream(child.line()) >> forked >> err;
    EXPECT_GE(forked, 1);
    EXPECT_LE(forked, 15);  // 16 tasks including the child itself
    EXPECT_EQ(err, EAGAIN);
    EXPECT_TRUE(g.usage().pids_limit_hit);
    EXPECT_TRUE(g.kill_all());
    const int status = child.wait();
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  }
  // Reap the reparented grandchildren (all SIGKILLed by kill_all).
  files::poll_until(std::chrono::seconds(5), [] {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    return errno == ECHILD;
  });
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST_F(CgroupHost, CpuQuotaHoldsAndUsageIsRead) {
  Group g = Group::create({.cpus = 0.5}, std::nullopt);
  Child child([](int) {
    const auto start = std::chrono::steady_clock::now();
    volatile uint64_t spins = 0;
    while (std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) spins = spins + 1;
    return 0;
  });
  g.attach(child.pid());
  child.go();
  const int status = child.wait();
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const Usage u = g.usage();
  ASSERT_TRUE(u.cpu_user_ms && u.cpu_sys_ms);
  const uint64_t total = *u.cpu_user_ms + *u.cpu_sys_ms;
  EXPECT_GT(total, 0u);
  // One second of spinning at half a core: about 500 ms, clearly less than a free spin.
  EXPECT_LE(total, 800u);
  std::cout << "cpu used in 1 s wall at --cpus 0.5: " << total << " ms\n";
}

TEST_F(CgroupHost, KillAllEndsASleepingChild) {
  Group g = Group::create({}, std::nullopt);
  ASSERT_FALSE(g.empty());  // accounting even without limits
  Child child([](int) {
    ::pause();
    return 0;
  });
  g.attach(child.pid());
  child.go();
  EXPECT_TRUE(g.kill_all());
  const int status = child.wait(std::chrono::seconds(3));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
}

TEST_F(CgroupHost, DestructionKillsAndRemovesEverything) {
  std::vector<std::string> dirs;
  // Declared outside the group's scope but forked after the group exists: under v2 a process
  // forked earlier would sit in the caller's cgroup and keep jail from enabling controllers.
  std::optional<Child> child;
  {
    Group g = Group::create({.memory_bytes = 32 * kMiB, .pids = 8}, std::nullopt);
    dirs = g.dirs();
    ASSERT_GE(dirs.size(), v2() ? 1u : 2u);
    child.emplace([](int) {
      ::pause();
      return 0;
    });
    g.attach(child->pid());
    child->go();
    EXPECT_GE(jail_cgroups(layout_).size(), before_.size() + dirs.size());
  }
  for (const auto& d : dirs) EXPECT_FALSE(files::exists(d)) << d;
  const int status = child->wait(std::chrono::seconds(3));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
}

TEST_F(CgroupHost, RemoveReportsAndEmptiesAndMoveHandsOver) {
  Group a = Group::create({.pids = 4}, std::nullopt);
  const auto dirs = a.dirs();
  Group b = std::move(a);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  EXPECT_EQ(b.dirs(), dirs);
  EXPECT_TRUE(b.remove());
  EXPECT_TRUE(b.empty());
  for (const auto& d : dirs) EXPECT_FALSE(files::exists(d)) << d;
  EXPECT_TRUE(b.remove());  // twice is harmless
}

TEST_F(CgroupHost, FailedSetupLeavesNothingBehind) {
  if (v2()) GTEST_SKIP() << "a v1 case: hierarchies with different own paths";
  // A parent that exists in the memory hierarchy (our own cgroup there) but not in the pids
  // one: the memory directory is made, the pids one fails, and the memory one must go again.
  const Hierarchy* mem = layout_.v1_with("memory");
  const Hierarchy* pids = layout_.v1_with("pids");
  ASSERT_TRUE(mem && pids);
  if (mem->own_path == "/" || files::exists(pids->dir_of(mem->own_path))) {
    GTEST_SKIP() << "needs a memory cgroup path that the pids hierarchy lacks";
  }
  try {
    Group g = Group::create({.memory_bytes = 64 * kMiB, .pids = 8}, mem->own_path);
    FAIL() << "created " << g.dirs().front();
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), ENOENT);
    EXPECT_EQ(e.step(), "cgroup pids");
    EXPECT_NE(std::string(e.what()).find(pids->mount_point), std::string::npos) << e.what();
  }
}

TEST_F(CgroupHost, AttachingAGonePidThrows) {
  Group g = Group::create({.pids = 4}, std::nullopt);
  Child child([](int) { return 0; });
  const pid_t gone = child.pid();
  child.go();
  child.wait();
  EXPECT_THROW(g.attach(gone), Error);
}

TEST_F(CgroupHost, NonRootCallerGetsAClearError) {
  Child child([](int out) {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
        ::setresuid(65534, 65534, 65534) != 0) {
      return 90;
    }
    for (const auto& h : detect_layout().v1) {
      if (h.writable) return 94;  // root's cgroups must not look delegated to nobody
    }
    if (const auto v2 = detect_layout().v2; v2 && v2->writable) return 95;
    try {
      Group g = Group::create({.memory_bytes = 64 * kMiB}, std::nullopt);
      return 91;  // must not succeed without delegation
    } catch (const Error& e) {
      ::dprintf(out, "%d %s\n", e.err(), e.what());
    }
    try {
      Group g = Group::create({}, std::nullopt);
      if (!g.empty()) return 92;  // nothing to account into, and that is fine
    } catch (const std::exception&) {
      return 93;  // no limits asked for: the run must go ahead
    }
    return 0;
  });
  child.go();
  const std::string out = child.output();
  const int status = child.wait();
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << out;
  int err = 0;
  std::istringstream(out) >> err;
  EXPECT_EQ(err, EACCES) << out;
  EXPECT_NE(out.find("EACCES"), std::string::npos) << out;
  EXPECT_NE(out.find(own_dir("memory")), std::string::npos) << out;
  EXPECT_NE(out.find("systemd-run --user --scope -p Delegate=yes"), std::string::npos) << out;
}

// v2, jail alone in its cgroup (a delegated scope): enabling controllers needs the cgroup to be
// empty, so jail moves itself into jail-supervisor-<pid> and back when the last group goes.
TEST_F(CgroupHost, V2JailMovesItselfOutAndBack) {
  if (!v2()) GTEST_SKIP() << "a cgroup v2 rule";
  const Hierarchy& h = *layout_.v2;
  const std::string self = std::to_string(::getpid());
  if (!files::exists(h.own_dir + "/cgroup.type")) GTEST_SKIP() << "in the root cgroup: exempt";
  if (files::procs(h.own_dir) != std::vector<pid_t>{::getpid()}) {
    GTEST_SKIP() << "other processes share this cgroup";
  }
  const auto control_before = files::read(h.own_dir + "/cgroup.subtree_control");
  {
    Group a = Group::create({.memory_bytes = 64 * kMiB, .pids = 16}, std::nullopt);
    EXPECT_EQ(h.dir_of(testing::cgroup_of(::getpid())), h.own_dir + "/jail-supervisor-" + self);
    Group b = Group::create({.cpus = 0.5}, std::nullopt);  // shares the preparation
    EXPECT_TRUE(a.remove());
    EXPECT_EQ(h.dir_of(testing::cgroup_of(::getpid())), h.own_dir + "/jail-supervisor-" + self);
    EXPECT_EQ(read_trimmed(b.dir_for("cpu") + "/cpu.max"), "50000 100000");
  }
  EXPECT_EQ(testing::cgroup_of(::getpid()), h.own_path);
  EXPECT_EQ(files::read(h.own_dir + "/cgroup.subtree_control"), control_before);
}

// v2, someone else in jail's cgroup: jail must not move them, so a limit fails closed and a run
// without limits goes ahead without memory accounting.
TEST_F(CgroupHost, V2OtherProcessesInTheCgroupFailClosed) {
  if (!v2()) GTEST_SKIP() << "a cgroup v2 rule";
  const Hierarchy& h = *layout_.v2;
  if (!files::exists(h.own_dir + "/cgroup.type")) GTEST_SKIP() << "in the root cgroup: exempt";
  const auto control =
      files::words(files::read(h.own_dir + "/cgroup.subtree_control").value_or(""));
  if (std::find(control.begin(), control.end(), "memory") != control.end()) {
    GTEST_SKIP() << "memory already enabled in " << h.own_dir;
  }
  Child other([](int) {
    ::pause();
    return 0;
  });
  try {
    Group g = Group::create({.memory_bytes = 64 * kMiB}, std::nullopt);
    FAIL() << "created " << g.dirs().front();
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), EBUSY) << e.what();
    EXPECT_NE(std::string(e.what()).find("Delegate=yes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(testing::cgroup_of(other.pid()), h.own_path);  // not moved
  Group g = Group::create({}, std::nullopt);
  EXPECT_EQ(g.version(), 2);
  EXPECT_FALSE(g.usage().peak_memory_bytes.has_value());
}

TEST(CgroupLimits, NonsenseIsRejectedBeforeTouchingAnything) {
  EXPECT_THROW((void)Group::create({.memory_bytes = 0}, std::nullopt, Layout{}), Error);
  EXPECT_THROW((void)Group::create({.pids = 0}, std::nullopt, Layout{}), Error);
  EXPECT_THROW((void)Group::create({.cpus = -1.0}, std::nullopt, Layout{}), Error);
  // No cgroups at all: a limit fails closed, no limit goes ahead with an empty group.
  EXPECT_THROW((void)Group::create({.pids = 5}, std::nullopt, Layout{}), Error);
  EXPECT_TRUE(Group::create({}, std::nullopt, Layout{}).empty());
}

}  // namespace
}  // namespace jail::cgroup
