// oci::host_side_binds: which binds of a run-once bundle runsc's own process makes in the rootfs
// (and so are left out of config.json), and which stay the runtime's because something the plan
// puts first would otherwise end up above them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "oci/host_side_binds.hpp"
#include "plan_builder.hpp"

namespace {

using jail::PlanBuilder;

// The decision for each op of `builder`, by target, in order.
std::vector<std::pair<std::string, bool>> decisions(PlanBuilder& builder) {
  jail::child::Plan& plan = builder.finish();
  const std::vector<bool> host_side = jail::oci::host_side_binds(plan, builder.descriptions());
  std::vector<std::pair<std::string, bool>> out;
  for (std::size_t i = 0; i < plan.op_count; ++i)
    out.emplace_back(builder.descriptions()[i].target, host_side[i]);
  return out;
}

using Decisions = std::vector<std::pair<std::string, bool>>;

TEST(HostSideBinds, ReadOnlyBindsOfTheRootAreMadeByRunscsProcess) {
  PlanBuilder builder;
  builder.bind("/usr", "/usr", true, "the host-minimal root");
  builder.optional_bind("/etc/ssl", "/etc/ssl");
  builder.symlink("/bin", "usr/bin");
  builder.file("/etc/passwd", "root:x:0:0::/:/bin/sh\n");
  EXPECT_EQ(
      decisions(builder),
      (Decisions{{"/usr", true}, {"/etc/ssl", true}, {"/bin", false}, {"/etc/passwd", false}}));
}

// The root runsc serves is read-only: a writable bind in it could not be written.
TEST(HostSideBinds, AWritableBindStaysTheRuntimes) {
  PlanBuilder builder;
  builder.bind("/srv/data", "/data", false, "--bind");
  EXPECT_EQ(decisions(builder), (Decisions{{"/data", false}}));
}

// Made first, a bind below an earlier mount of the runtime's would end up under it: the tmpfs or
// the writable bind would hide it.
TEST(HostSideBinds, ABindBelowAnEarlierMountOfTheRuntimesStaysTheRuntimes) {
  PlanBuilder builder;
  builder.tmpfs("/tmp", 1 << 20, 01777, false, true, "--tmpfs");
  builder.bind("/srv/in-tmp", "/tmp/data", true, "--ro-bind");
  builder.bind("/srv/work", "/work", false, "--bind");
  builder.bind("/srv/in-work", "/work/data", true, "--ro-bind");
  builder.proc("/proc");
  builder.bind("/srv/proc", "/proc/x", true, "--ro-bind");
  EXPECT_EQ(decisions(builder), (Decisions{{"/tmp", false},
                                           {"/tmp/data", false},
                                           {"/work", false},
                                           {"/work/data", false},
                                           {"/proc", false},
                                           {"/proc/x", false}}));
}

// Inside a bind runsc's process makes, a read-only bind is made after it by the same process,
// as natively: its target resolved beneath the root, no symlink followed at the end.
TEST(HostSideBinds, ABindInsideOneRunscsProcessMakesIsMadeThereToo) {
  PlanBuilder builder;
  builder.bind("/srv/cwd", "/srv/cwd", true, "the current directory");
  builder.bind("/srv/data", "/srv/cwd/link", true, "--ro-bind");
  builder.bind("/usr", "/usr", true, "the host-minimal root");
  builder.bind("/srv/share", "/usr/share/extra", true, "--ro-bind");
  EXPECT_EQ(decisions(builder), (Decisions{{"/srv/cwd", true},
                                           {"/srv/cwd/link", true},
                                           {"/usr", true},
                                           {"/usr/share/extra", true}}));
}

// A bind that takes the place of an earlier entry at its path (the root's own /bin symlink) is
// mounted over it by the runtime, as natively; over an earlier bind runsc's process makes, by
// that process after it. A later mount over a host-side bind covers it as natively too.
TEST(HostSideBinds, ABindOverAnEarlierEntryAtItsPathStaysTheRuntimes) {
  PlanBuilder builder;
  builder.symlink("/bin", "usr/bin");
  builder.bind("/srv/bin", "/bin", true, "--ro-bind");
  builder.bind("/etc/hosts", "/etc/hosts", true, "the host-minimal root");
  builder.bind("/srv/hosts", "/etc/hosts", true, "--ro-bind");
  builder.tmpfs("/etc", 1 << 20, 0755, false, true, "--tmpfs");
  EXPECT_EQ(decisions(builder), (Decisions{{"/bin", false},
                                           {"/bin", false},
                                           {"/etc/hosts", true},
                                           {"/etc/hosts", true},
                                           {"/etc", false}}));
}

// An earlier mkdir is a directory on the way, not a mount; /dev is the runtime's own tmpfs.
TEST(HostSideBinds, AnEarlierDirectoryDoesNotHoldABindBackButDevDoes) {
  PlanBuilder builder;
  builder.mkdir("/opt");
  builder.bind("/srv/tool", "/opt/tool", true, "--ro-bind");
  builder.bind("/srv/dev-file", "/dev/thing", true, "--ro-bind");
  EXPECT_EQ(decisions(builder),
            (Decisions{{"/opt", false}, {"/opt/tool", true}, {"/dev/thing", false}}));
}

// A device bind keeps device access, which the sentry grants on a mount of its own only.
TEST(HostSideBinds, DeviceBindsStayTheRuntimes) {
  PlanBuilder builder;
  builder.device("null");
  EXPECT_EQ(decisions(builder), (Decisions{{"/dev/null", false}}));
}

}  // namespace
