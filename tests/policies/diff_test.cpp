// `jail policy diff`: which syscalls a policy change widens or narrows, the examples it gives,
// its JSON, and the exit status that gates a review in CI.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/ptrace.h>

#include <cerrno>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "policy/diff.hpp"
#include "policy_cli.hpp"
#include "policy_command.hpp"

namespace jail::policy {
namespace {

Policy text(const std::string& body, const std::string& name) {
  return parse_policy(body, name);
}

const SyscallChange* find(const PolicyDiff& d, std::string_view name) {
  for (const auto& c : d.syscalls)
    if (c.syscall == name) return &c;
  return nullptr;
}

TEST(Diff, ComparesDecisionsNotText) {
  Policy a = text(
      "default errno EPERM\nallow read write\n"
      "allow socket if arg0 == AF_UNIX\nkill ptrace\nerrno EPERM syslog\n",
      "a.policy");
  // Same decisions written differently: a number for a constant, another rule order for
  // different syscalls, an unreachable rule after an unconditional one, and an explicit rule
  // that says what the default says.
  Policy same = text(
      "default errno EPERM\nkill ptrace\nallow socket if arg0 == 1\n"
      "allow write read\nallow read if arg0 == 3\n",
      "same.policy");
  PolicyDiff d = diff(a, same);
  EXPECT_TRUE(d.empty()) << diff_text(d);
  EXPECT_FALSE(d.wider());
  EXPECT_FALSE(d.narrower());
}

TEST(Diff, ActionsOrderedByStrictness) {
  const std::vector<std::string> order = {"allow", "log", "errno EPERM", "trap", "kill"};
  for (std::size_t i = 0; i < order.size(); ++i) {
    for (std::size_t j = 0; j < order.size(); ++j) {
      Policy a = text("default kill\n" + order[i] + " getpid\n", "a.policy");
      Policy b = text("default kill\n" + order[j] + " getpid\n", "b.policy");
      PolicyDiff d = diff(a, b);
      EXPECT_EQ(d.wider(), j < i) << order[i] << " → " << order[j] << "\n" << diff_text(d);
      EXPECT_EQ(d.narrower(), j > i) << order[i] << " → " << order[j];
      EXPECT_EQ(d.empty(), i == j);
    }
  }
  // Another errno is a change, but no wider.
  PolicyDiff d = diff(text("default kill\nerrno EPERM getpid\n", "a.policy"),
                      text("default kill\nerrno EACCES getpid\n", "b.policy"));
  ASSERT_EQ(d.syscalls.size(), 1u);
  EXPECT_EQ(d.syscalls[0].change, Change::changed);
  EXPECT_FALSE(d.wider());
  EXPECT_FALSE(d.narrower());
  ASSERT_TRUE(d.syscalls[0].other);
  EXPECT_EQ(to_string(d.syscalls[0].other->after), "errno EACCES");
}

TEST(Diff, ConditionWideningAndNarrowingWithAnExample) {
  Policy unix_only = text("default errno EPERM\nallow socket if arg0 == AF_UNIX\n", "a.policy");
  Policy unix_inet =
      text("default errno EPERM\nallow socket if arg0 in {AF_UNIX, AF_INET}\n", "b.policy");
  PolicyDiff wider = diff(unix_only, unix_inet);
  ASSERT_EQ(wider.syscalls.size(), 1u) << diff_text(wider);
  const SyscallChange& c = wider.syscalls[0];
  EXPECT_EQ(c.change, Change::wider);
  ASSERT_TRUE(c.widened);
  EXPECT_FALSE(c.narrowed);
  // AF_INET, and the type the baseline's socket rules read (any but a datagram).
  ASSERT_EQ(c.widened->args.size(), 2u);
  EXPECT_EQ(c.widened->args[0], (std::pair<int, std::uint64_t>{0, 2}));
  EXPECT_EQ(c.widened->args[1], (std::pair<int, std::uint64_t>{1, 0}));
  EXPECT_EQ(to_string(c.widened->before), "errno EPERM");
  EXPECT_EQ(to_string(c.widened->after), "allow");
  EXPECT_TRUE(wider.wider());

  PolicyDiff narrower = diff(unix_inet, unix_only);
  ASSERT_EQ(narrower.syscalls.size(), 1u);
  EXPECT_EQ(narrower.syscalls[0].change, Change::narrower);
  EXPECT_FALSE(narrower.wider());
  EXPECT_TRUE(narrower.narrower());

  // Moving the allowed value: wider and narrower at once.
  Policy inet_only = text("default errno EPERM\nallow socket if arg0 == AF_INET\n", "c.policy");
  PolicyDiff mixed = diff(unix_only, inet_only);
  ASSERT_EQ(mixed.syscalls.size(), 1u);
  EXPECT_EQ(mixed.syscalls[0].change, Change::mixed);
  EXPECT_TRUE(mixed.wider());
}

// kill → errno at arg0 = 0 is met first, but PTRACE_SEIZE now runs: that is recorded apart.
TEST(Diff, WhereACallNowRunsIsKeptBesideTheFirstWiderExample) {
  Policy killed = text("default errno EPERM\nkill ptrace\n", "a.policy");
  Policy seize =
      text("default errno EPERM\nallow ptrace if arg0 == PTRACE_SEIZE\nerrno EPERM ptrace\n",
           "b.policy");
  PolicyDiff d = diff(killed, seize);
  const SyscallChange* c = find(d, "ptrace");
  ASSERT_NE(c, nullptr) << diff_text(d);
  ASSERT_TRUE(c->widened);
  EXPECT_EQ(to_string(c->widened->after), "errno EPERM");
  ASSERT_TRUE(c->runs_now) << diff_text(d);
  EXPECT_EQ(c->runs_now->args, (std::vector<std::pair<int, std::uint64_t>>{{0, PTRACE_SEIZE}}));
  EXPECT_EQ(to_string(c->runs_now->after), "allow");
  EXPECT_NE(diff_text(d).find("runs at arg0=0x4206: kill → allow"), std::string::npos)
      << diff_text(d);
  EXPECT_EQ(diff_json(d)["syscalls"][0]["runs_at"]["after"], "allow");

  // kill → errno everywhere: wider, but nothing runs.
  PolicyDiff refused = diff(killed, text("default errno EPERM\nerrno EPERM ptrace\n", "c.policy"));
  ASSERT_EQ(refused.syscalls.size(), 1u);
  EXPECT_TRUE(refused.syscalls[0].widened);
  EXPECT_FALSE(refused.syscalls[0].runs_now);
}

TEST(Diff, RangeBoundariesAreFoundExactly) {
  // `< 10` against `<= 10` differs at the single value 10; the boundary points must hit it.
  PolicyDiff d = diff(text("default kill\nallow close if arg0 < 10\n", "a.policy"),
                      text("default kill\nallow close if arg0 <= 10\n", "b.policy"));
  ASSERT_EQ(d.syscalls.size(), 1u) << diff_text(d);
  ASSERT_TRUE(d.syscalls[0].widened);
  EXPECT_EQ(d.syscalls[0].widened->args[0].second, 10u);
  EXPECT_FALSE(d.syscalls[0].narrowed);
  // Two conditions on different arguments: adding one narrows.
  PolicyDiff two =
      diff(text("default kill\nallow ioctl if arg1 == TCGETS\n", "a.policy"),
           text("default kill\nallow ioctl if arg1 == TCGETS && arg0 == 1\n", "b.policy"));
  ASSERT_EQ(two.syscalls.size(), 1u) << diff_text(two);
  EXPECT_EQ(two.syscalls[0].change, Change::narrower) << diff_text(two);
}

TEST(Diff, BitMaskConditions) {
  Policy no_exec = text("default kill\nallow mmap if (arg2 & PROT_EXEC) == 0\n", "a.policy");
  Policy any = text("default kill\nallow mmap\n", "b.policy");
  PolicyDiff d = diff(no_exec, any);
  ASSERT_EQ(d.syscalls.size(), 1u) << diff_text(d);
  ASSERT_TRUE(d.syscalls[0].widened) << diff_text(d);
  EXPECT_NE(d.syscalls[0].widened->args[0].second & 0x4, 0u);  // PROT_EXEC set
  EXPECT_FALSE(d.syscalls[0].narrowed);
  EXPECT_EQ(diff(any, no_exec).syscalls[0].change, Change::narrower);
}

// Differences the boundary points stepped over, found from the conditions themselves: a 32-bit
// mask beside a 64-bit bound (0x100000005 is allowed by one only), and three flag masks that
// only together make a value the earlier rule refused (0x537). Both diffs said nothing.
TEST(Diff, RegionsTheBoundaryPointsMissAreFound) {
  PolicyDiff bounds =
      diff(text("default kill\nallow lseek if (arg1 & 0xffffffff) == 5 && arg1 > 0x100000000\n",
                "a.policy"),
           text("default kill\nallow lseek if (arg1 & 0xffffffff) == 5 && arg1 > 0x200000000\n",
                "b.policy"));
  ASSERT_EQ(bounds.syscalls.size(), 1u) << diff_text(bounds);
  EXPECT_EQ(bounds.syscalls[0].change, Change::narrower) << diff_text(bounds);
  ASSERT_TRUE(bounds.syscalls[0].narrowed);

  PolicyDiff masks = diff(text("default kill\n"
                               "errno EPERM lseek if (arg1 & 0xf) == 7 && (arg1 & 0xf0) == 0x30 "
                               "&& (arg1 & 0xf00) == 0x500\n"
                               "allow lseek\n",
                               "a.policy"),
                          text("default kill\nallow lseek\n", "b.policy"));
  ASSERT_EQ(masks.syscalls.size(), 1u) << diff_text(masks);
  EXPECT_EQ(masks.syscalls[0].change, Change::wider) << diff_text(masks);
  ASSERT_TRUE(masks.syscalls[0].widened);
  EXPECT_EQ(masks.syscalls[0].widened->args[0].second & 0xfff, 0x537u) << diff_text(masks);
}

TEST(Diff, DefaultChange) {
  Policy a = text("default errno EPERM\nallow read\n", "a.policy");
  Policy b = text("default kill\nallow read\n", "b.policy");
  PolicyDiff d = diff(a, b);
  EXPECT_TRUE(d.narrower());
  EXPECT_FALSE(d.wider());
  EXPECT_NE(diff_text(d).find("default: errno EPERM → kill  (narrower"), std::string::npos)
      << diff_text(d);
  EXPECT_TRUE(diff(b, a).wider());
}

// Expectations read off policies/shipped/default.policy and python.policy by hand.
TEST(Diff, DefaultVersusPythonMatchesHandCheckedExpectations) {
  Policy dflt = load_policy("default"), python = load_policy("python");
  PolicyDiff d = diff(dflt, python);
  EXPECT_FALSE(d.wider()) << diff_text(d);
  EXPECT_TRUE(d.narrower());
  EXPECT_FALSE(d.default_before);  // both `default errno EPERM`
  // Same decisions: allowed, killed, or refused by a rule that says what the default says (or
  // answered by the baseline in both: clone3, openat2, setxattr).
  for (const char* same : {"read", "openat", "clone", "clone3", "ptrace", "bpf", "mount", "vhangup",
                           "socketpair", "syslog", "settimeofday", "futex", "openat2", "setxattr"})
    EXPECT_EQ(find(d, same), nullptr) << same << "\n" << diff_text(d);
  // default allows, python leaves to its EPERM default.
  for (const char* gone :
       {"shmget", "msgget", "removexattr", "setuid", "mknod", "mlock", "capset"}) {
    const SyscallChange* c = find(d, gone);
    ASSERT_NE(c, nullptr) << gone;
    EXPECT_EQ(c->change, Change::narrower) << gone;
    ASSERT_TRUE(c->narrowed);
    EXPECT_EQ(to_string(c->narrowed->before), "allow");
    EXPECT_EQ(to_string(c->narrowed->after), "errno EPERM");
    EXPECT_FALSE(c->after.back().where) << gone << ": decided by the default";
  }
  // AF_NETLINK (16): default allows it, python answers EAFNOSUPPORT.
  const SyscallChange* socket = find(d, "socket");
  ASSERT_NE(socket, nullptr);
  EXPECT_EQ(socket->change, Change::narrower);
  ASSERT_TRUE(socket->narrowed);
  EXPECT_EQ(socket->narrowed->args, (std::vector<std::pair<int, std::uint64_t>>{{0, 16}, {1, 0}}));
  EXPECT_EQ(to_string(socket->narrowed->after), "errno EAFNOSUPPORT");
  // ioctl: default allows every request but the baseline's two; python a list, else ENOTTY.
  const SyscallChange* ioctl = find(d, "ioctl");
  ASSERT_NE(ioctl, nullptr);
  EXPECT_EQ(ioctl->change, Change::narrower);
  EXPECT_EQ(to_string(ioctl->narrowed->after), "errno ENOTTY");
  EXPECT_EQ(ioctl->before.size(), 2u);  // baseline TIOCSTI/TIOCLINUX, allow
  EXPECT_EQ(ioctl->after.size(), 3u);   // baseline, the list, errno ENOTTY
  // personality: a few values allowed before, killed after; name_to_handle_at: EOPNOTSUPP → kill.
  const SyscallChange* personality = find(d, "personality");
  ASSERT_NE(personality, nullptr);
  EXPECT_EQ(personality->change, Change::narrower);
  EXPECT_EQ(to_string(personality->narrowed->after), "kill");
  const SyscallChange* handle = find(d, "name_to_handle_at");
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(handle->change, Change::narrower);
  EXPECT_EQ(handle->narrowed->before, (Action{ActionKind::errno_code, EOPNOTSUPP}));
  // Every listed syscall is narrower: python allows nothing default refuses.
  for (const auto& c : d.syscalls) EXPECT_EQ(c.change, Change::narrower) << c.syscall;

  // The other way round every one of those is wider.
  PolicyDiff back = diff(python, dflt);
  EXPECT_TRUE(back.wider());
  EXPECT_FALSE(back.narrower()) << diff_text(back);
  EXPECT_EQ(back.syscalls.size(), d.syscalls.size());
  ASSERT_NE(find(back, "socket"), nullptr);
  EXPECT_EQ(to_string(find(back, "socket")->widened->after), "allow");
}

// --- the CLI: exit status, table, JSON, bad input

using policy_test::CliRun;

CliRun run(std::vector<std::string> words) {
  words.insert(words.begin(), "diff");
  return policy_test::run_policy_cli(std::move(words));
}

class DiffCli : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& body) {
    return scratch_.write(name, body);
  }
  policy_test::ScratchDir scratch_;
  const std::string& dir_ = scratch_.path();
};

TEST_F(DiffCli, ExitZeroWhenNotWiderOneWhenWider) {
  CliRun same = run({"default", std::string(POLICY_SHIPPED_DIR) + "/default.policy"});
  EXPECT_EQ(same.code, 0) << same.out << same.err;
  EXPECT_EQ(same.out, "");
  EXPECT_EQ(same.err, "no differences: both decide every syscall alike\n");
  CliRun narrower = run({"default", "python"});
  EXPECT_EQ(narrower.code, 0) << narrower.out << narrower.err;
  EXPECT_NE(narrower.out.find("python.policy is not wider than default.policy"), std::string::npos)
      << narrower.out;
  CliRun wider = run({"python", "default"});
  EXPECT_EQ(wider.code, 1) << wider.out << wider.err;
  EXPECT_NE(wider.out.find("default.policy is WIDER than python.policy"), std::string::npos);

  std::string a = write("a.policy", "default errno EPERM\nallow socket if arg0 == AF_UNIX\n");
  std::string b = write("b.policy", "default errno EPERM\nallow socket if arg0 != AF_PACKET\n");
  EXPECT_EQ(run({a, b}).code, 1);
  EXPECT_EQ(run({b, a}).code, 0);
}

TEST_F(DiffCli, TableShowsRulesAndExamples) {
  CliRun r = run({"default", "python"});
  // One row per syscall: name, change, the deciding rules on each side.
  EXPECT_NE(r.out.find("SYSCALL"), std::string::npos) << r.out;
  std::size_t row = r.out.find("\nshmget ");
  ASSERT_NE(row, std::string::npos) << r.out;
  std::string line = r.out.substr(row + 1, r.out.find('\n', row + 1) - row - 1);
  EXPECT_NE(line.find("narrower"), std::string::npos) << line;
  EXPECT_NE(line.find("allow  (default.policy:"), std::string::npos) << line;
  EXPECT_NE(line.find("otherwise errno EPERM  (default)"), std::string::npos) << line;
  EXPECT_NE(r.out.find("narrower at arg0=0x10, arg1=0: allow → errno EAFNOSUPPORT"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("\nread "), std::string::npos);  // both allow read
}

TEST_F(DiffCli, JsonShape) {
  CliRun r = run({"default", "python", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["before"], "default.policy");
  EXPECT_EQ(j["after"], "python.policy");
  EXPECT_EQ(j["wider"], false);
  EXPECT_EQ(j["narrower"], true);
  EXPECT_TRUE(j["default"].is_null());
  bool saw_socket = false;
  for (const auto& s : j["syscalls"]) {
    EXPECT_EQ(s["change"], "narrower") << s.dump();
    EXPECT_TRUE(s["wider_at"].is_null());
    EXPECT_TRUE(s["narrower_at"].is_object());
    if (s["syscall"] != "socket") continue;
    saw_socket = true;
    EXPECT_EQ(s["nr"], 41);
    EXPECT_EQ(s["narrower_at"]["args"]["arg0"], 16);
    EXPECT_EQ(s["narrower_at"]["before"], "allow");
    EXPECT_EQ(s["narrower_at"]["after"], "errno EAFNOSUPPORT");
    const auto& last = s["after"].back();
    EXPECT_EQ(last["action"], "errno EAFNOSUPPORT");
    EXPECT_EQ(last["file"], "python.policy");
    EXPECT_TRUE(last["line"].is_number());
    // The baseline's rule first, then the policy's own.
    EXPECT_EQ(s["before"][1]["condition"], "arg0 in {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK}");
  }
  EXPECT_TRUE(saw_socket);

  std::string a = write("a.policy", "default kill\nallow read\n");
  std::string b = write("b.policy", "default errno EPERM\nlog read\n");
  CliRun mixed = run({a, b, "--format", "json"});
  EXPECT_EQ(mixed.code, 1);
  auto m = nlohmann::json::parse(mixed.out);
  EXPECT_EQ(m["wider"], true);
  EXPECT_EQ(m["narrower"], true);
  EXPECT_EQ(m["default"]["change"], "wider");
  EXPECT_EQ(m["syscalls"][0]["syscall"], "read");
  EXPECT_EQ(m["syscalls"][0]["change"], "narrower");
  EXPECT_TRUE(m["syscalls"][0]["narrower_at"]["args"].empty());
}

TEST_F(DiffCli, BadInputExitsTwoWithTheLocation) {
  CliRun missing = run({"default", dir_ + "/nosuch.policy"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("nosuch.policy"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("cannot read"), std::string::npos) << missing.err;
  std::string broken = std::string(POLICY_SAMPLES_DIR) + "/broken_syntax.policy";
  CliRun parse = run({broken, "default"});
  EXPECT_EQ(parse.code, 2);
  EXPECT_NE(parse.err.find(broken + ":3:12: unknown syscall 'wirte'"), std::string::npos)
      << parse.err;
  EXPECT_EQ(run({"default", "nosuch"}).code, 2);
  EXPECT_EQ(run({"default", "python", "--format", "yaml"}).code, 2);
}

}  // namespace
}  // namespace jail::policy
