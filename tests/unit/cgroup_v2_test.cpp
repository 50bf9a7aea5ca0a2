// The cgroup v2 side, run against whatever v2 hierarchy this machine has. On a hybrid host the
// unified mount carries (almost) no controllers, so what is checked here is the controller-free
// part: the leaf, clone3(CLONE_INTO_CGROUP), attach, cpu.stat, cgroup.kill, removal, failing
// closed when a controller is missing, and the supervisor-leaf dance of subtree.cpp using any
// controller the host offers. Memory, pids and cpu limits under v2 are proven by the VM test.
#include <linux/sched.h>
#include <sys/syscall.h>

#include <cerrno>
#include <ctime>

#include <gtest/gtest.h>

#include "../../jail/src/cgroup/state.hpp"
#include "cgroup_support.hpp"

namespace jail::cgroup {
namespace {

using testing::cgroup_of;
using testing::Child;
using testing::jail_cgroups;

// A child born inside `cgroup_fd` that spins for `spin_ms`, then exits or, with `then_pause`,
// sleeps until killed.
pid_t clone_into(int cgroup_fd, int spin_ms, bool then_pause) {
  clone_args args{};
  args.flags = CLONE_INTO_CGROUP;
  args.exit_signal = SIGCHLD;
  args.cgroup = static_cast<uint64_t>(cgroup_fd);
  const long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) {
    // Spins for spin_ms of its own CPU time, not wall time: on a busy machine a wall-clock spin
    // may get far less CPU than the accounting check below expects.
    const auto cpu_ms = [] {
      timespec now{};
      ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
      return now.tv_sec * 1000 + now.tv_nsec / 1'000'000;
    };
    const auto start = cpu_ms();
    volatile uint64_t spins = 0;
    while (cpu_ms() - start < spin_ms) spins = spins + 1;
    if (then_pause) ::pause();
    ::_exit(0);
  }
  return static_cast<pid_t>(pid);
}

int wait_for(pid_t pid) {
  int status = -1;
  ::waitpid(pid, &status, 0);
  return status;
}

class CgroupV2 : public ::testing::Test {
 protected:
  void SetUp() override {
    const Layout found = detect_layout();
    if (!found.v2 || found.v2->own_dir.empty()) GTEST_SKIP() << "no cgroup v2 mount here";
    if (::geteuid() != 0 && !found.v2->writable) GTEST_SKIP() << "own v2 cgroup not writable";
    // Whatever the host's mode, drive the v2 back end.
    layout_.mode = Mode::v2;
    layout_.v2 = found.v2;
    h_ = *found.v2;
    before_ = jail_cgroups(layout_);
  }
  void TearDown() override {
    if (!IsSkipped()) {
      EXPECT_EQ(jail_cgroups(layout_), before_) << "cgroups left behind";
    }
  }
  bool has(std::string_view controller) const { return h_.has(controller); }

  Layout layout_;
  Hierarchy h_;
  std::vector<std::string> before_;
};

TEST_F(CgroupV2, CloneIntoCgroupAccountsAndRemoves) {
  std::string leaf;
  {
    Group g = Group::create({}, std::nullopt, layout_);
    ASSERT_EQ(g.version(), 2);
    ASSERT_GE(g.v2_fd(), 0);
    leaf = g.dirs().front();
    EXPECT_EQ(leaf.rfind(h_.own_dir + "/jail-", 0), 0u) << leaf;
    const pid_t pid = clone_into(g.v2_fd(), 300, false);
    ASSERT_GT(pid, 0) << files::errno_text(errno);
    EXPECT_EQ(h_.dir_of(cgroup_of(pid)), leaf);
    EXPECT_NO_THROW(g.attach(pid));  // already there: nothing to write
    const int status = wait_for(pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    const Usage u = g.usage();
    ASSERT_TRUE(u.cpu_user_ms && u.cpu_sys_ms);
    EXPECT_GT(*u.cpu_user_ms + *u.cpu_sys_ms, 100u);
    EXPECT_FALSE(u.oom_killed);
  }
  EXPECT_FALSE(files::exists(leaf));
}

TEST_F(CgroupV2, CgroupKillEndsEverything) {
  Group g = Group::create({}, std::nullopt, layout_);
  ASSERT_GE(g.v2_fd(), 0);
  const pid_t a = clone_into(g.v2_fd(), 0, true);
  const pid_t b = clone_into(g.v2_fd(), 0, true);
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  EXPECT_TRUE(g.kill_all());
  for (pid_t pid : {a, b}) {
    const int status = wait_for(pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  }
  EXPECT_TRUE(g.remove());
}

TEST_F(CgroupV2, AttachMovesAForkedChild) {
  Child child([](int) {
    ::pause();
    return 0;
  });
  std::string leaf;
  {
    Group g = Group::create({}, std::nullopt, layout_);
    leaf = g.dirs().front();
    g.attach(child.pid());
    EXPECT_EQ(h_.dir_of(cgroup_of(child.pid())), leaf);
    child.go();
  }  // the destructor kills it
  const int status = child.wait(std::chrono::seconds(3));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_FALSE(files::exists(leaf));
}

TEST_F(CgroupV2, MissingControllerFailsClosed) {
  if (has("memory")) GTEST_SKIP() << "memory is delegated here; the VM test covers limits";
  try {
    Group g = Group::create({.memory_bytes = 64 << 20}, std::nullopt, layout_);
    FAIL() << "created " << g.dirs().front();
  } catch (const Error& e) {
    EXPECT_EQ(e.step(), "cgroup memory");
    EXPECT_EQ(e.err(), ENOTSUP);
    const std::string what = e.what();
    EXPECT_NE(what.find(h_.own_dir + "/cgroup.controllers"), std::string::npos) << what;
    EXPECT_NE(what.find("Delegate=yes"), std::string::npos) << what;
  }
}

// subtree.cpp against a parent we create and fill ourselves: a child process sits in it, asks
// for a controller, gets moved into jail-supervisor-<pid>, and is moved back on release.
TEST_F(CgroupV2, SupervisorLeafForTheNoInternalProcessRule) {
  const std::string parent = h_.own_dir + "/" + files::unique_name();
  ASSERT_EQ(::mkdir(parent.c_str(), 0755), 0) << files::errno_text(errno);
  std::string controller;
  for (const auto& c : files::words(files::read(parent + "/cgroup.controllers").value_or(""))) {
    if (c != "cpuset") controller = c;  // cpuset needs cpus/mems set first
  }
  if (controller.empty()) {
    ::rmdir(parent.c_str());
    GTEST_SKIP() << "no controller reaches a child of " << h_.own_dir << " (hybrid host)";
  }

  Child child([&](int out) {
    auto say = [&](const std::string& s) { ::dprintf(out, "%s\n", s.c_str()); };
    const std::string self = std::to_string(::getpid());
    if (files::write(parent + "/cgroup.procs", self) != 0) return 10;
    // Alone in the parent: jail moves itself out and enables the controller.
    const auto on = subtree::prepare(parent, {controller}, {});
    if (on != std::vector<std::string>{controller}) return 11;
    const auto control = files::read(parent + "/cgroup.subtree_control").value_or("");
    if (control.find(controller) == std::string::npos) return 12;
    const std::string leaf = parent + "/jail-supervisor-" + self;
    if (h_.dir_of(cgroup_of(::getpid())) != leaf) return 13;
    // A second jail of the same process shares the preparation.
    (void)subtree::prepare(parent, {controller}, {});
    if (!subtree::release(parent)) return 14;
    if (!files::exists(leaf)) return 15;  // still in use by the first
    if (!subtree::release(parent)) return 16;
    if (files::exists(leaf)) return 17;
    if (h_.dir_of(cgroup_of(::getpid())) != parent) return 18;
    if (files::read(parent + "/cgroup.subtree_control").value_or("x") != "\n") return 19;
    // Someone else in the parent: jail must refuse rather than move them.
    const pid_t other = ::fork();
    if (other == 0) {
      ::pause();
      ::_exit(0);
    }
    try {
      (void)subtree::prepare(parent, {controller}, {});
      say("prepare succeeded with another process in the parent");
    } catch (const Error& e) {
      say(e.what());
    }
    (void)subtree::release(parent);
    ::kill(other, SIGKILL);
    ::waitpid(other, nullptr, 0);
    return 0;
  });
  child.go();
  const std::string message = child.line();
  const int status = child.wait();
  EXPECT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "step failed, see the return codes in the child";
  EXPECT_NE(message.find("EBUSY"), std::string::npos) << message;
  EXPECT_NE(message.find("Delegate=yes"), std::string::npos) << message;
  EXPECT_TRUE(files::subdirs(parent).empty());
  EXPECT_EQ(::rmdir(parent.c_str()), 0) << files::errno_text(errno);
}

}  // namespace
}  // namespace jail::cgroup
