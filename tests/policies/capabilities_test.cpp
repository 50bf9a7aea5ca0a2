// `jail policy explain --capabilities`: a policy in categories, and yes/no answers to a
// reviewer's questions worked out by evaluating the policy at the arguments programs pass.
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <sys/socket.h>

#include <nlohmann/json.hpp>

#include "policy/capabilities.hpp"
#include "policy/evaluate.hpp"
#include "policy/syscalls.hpp"
#include "policy_cli.hpp"
#include "policy_command.hpp"

namespace jail::policy {

// Failures then say "no", not "1-byte object <02>".
void PrintTo(Answer answer, std::ostream* out) {
  *out << to_string(answer);
}

namespace {

Answer answer_to(const Capabilities& c, std::string_view key) {
  for (const auto& q : c.questions)
    if (q.key == key) return q.answer;
  ADD_FAILURE() << "no question " << key;
  return Answer::partly;
}

const CategoryCapabilities& row_of(const Capabilities& c, Category category) {
  for (const auto& row : c.categories)
    if (row.category == category) return row;
  throw std::logic_error("no row");
}

bool runs(const Policy& p, const char* syscall, std::uint64_t arg0 = 0) {
  struct seccomp_data data {};
  data.arch = AUDIT_ARCH_X86_64;
  data.nr = *syscall_number(syscall);
  data.args[0] = arg0;
  return evaluate(p, data).action.kind == ActionKind::allow;
}

TEST(Capabilities, MinimalOpensNoSocketAndStartsNoProcess) {
  const Policy minimal = load_policy("minimal");
  // What policies/shipped/minimal.policy says of them, which the answers must follow.
  ASSERT_FALSE(runs(minimal, "socket", AF_INET));
  ASSERT_FALSE(runs(minimal, "socket", AF_UNIX));
  ASSERT_FALSE(runs(minimal, "clone", SIGCHLD));
  ASSERT_FALSE(runs(minimal, "fork"));
  ASSERT_TRUE(runs(minimal, "execve"));  // the jail's own exec of the tool
  const Capabilities c = capabilities(minimal);
  EXPECT_EQ(answer_to(c, "network_sockets"), Answer::no);
  EXPECT_EQ(answer_to(c, "unix_sockets"), Answer::no);
  // execve alone only replaces the tool: no new process.
  EXPECT_EQ(answer_to(c, "processes"), Answer::no);
  EXPECT_EQ(answer_to(c, "threads"), Answer::no);
  EXPECT_EQ(answer_to(c, "write_files"), Answer::no);
}

TEST(Capabilities, DefaultStartsThreadsAndProcessesButTracesMountsLoadsNothing) {
  const Capabilities c = capabilities(load_policy("default"));
  EXPECT_EQ(answer_to(c, "threads"), Answer::yes);
  EXPECT_EQ(answer_to(c, "processes"), Answer::yes);
  EXPECT_EQ(answer_to(c, "network_sockets"), Answer::yes);
  EXPECT_EQ(answer_to(c, "write_files"), Answer::yes);
  EXPECT_EQ(answer_to(c, "other_processes"), Answer::no);
  EXPECT_EQ(answer_to(c, "kernel_code"), Answer::no);
  EXPECT_EQ(answer_to(c, "mounts_namespaces"), Answer::no);
  EXPECT_EQ(answer_to(c, "clock"), Answer::no);

  const auto& processes = row_of(c, Category::processes);
  auto killed = std::find_if(processes.refused.begin(), processes.refused.end(),
                             [](const RefusedSyscalls& g) { return g.how == "kill"; });
  ASSERT_NE(killed, processes.refused.end());
  EXPECT_NE(std::find(killed->syscalls.begin(), killed->syscalls.end(), "ptrace"),
            killed->syscalls.end());
  // The baseline's namespace flags make clone conditional, and the condition is shown.
  auto clone = std::find_if(processes.conditional.begin(), processes.conditional.end(),
                            [](const ConditionalSyscall& s) { return s.syscall == "clone"; });
  ASSERT_NE(clone, processes.conditional.end());
  ASSERT_EQ(clone->rules.size(), 2u);
  EXPECT_EQ(clone->rules[0].rfind("kill if (arg0 & (CLONE_NEWNS", 0), 0u) << clone->rules[0];
  EXPECT_EQ(clone->rules[1], "otherwise allow");
}

TEST(Capabilities, EverySyscallIsAllowedConditionalOrRefusedOnce) {
  for (const char* name : {"default", "python", "minimal"}) {
    const Capabilities c = capabilities(load_policy(name));
    std::size_t seen = 0;
    for (const auto& row : c.categories) {
      seen += row.allowed.size() + row.conditional.size();
      for (const auto& g : row.refused) seen += g.syscalls.size();
    }
    EXPECT_EQ(seen, all_syscall_names().size()) << name;
  }
}

TEST(Capabilities, UnixSocketsOnlyIsNoNetwork) {
  const Capabilities c =
      capabilities(parse_policy("default errno EPERM\nallow socket if arg0 == AF_UNIX\n", "u"));
  EXPECT_EQ(answer_to(c, "unix_sockets"), Answer::yes);
  EXPECT_EQ(answer_to(c, "network_sockets"), Answer::no);
  const auto& network = row_of(c, Category::network);
  ASSERT_EQ(network.conditional.size(), 1u);
  EXPECT_EQ(network.conditional[0].syscall, "socket");
  // The baseline's datagram refusal first, then the policy's own rule and its default.
  EXPECT_EQ(network.conditional[0].rules,
            (std::vector<std::string>{network.conditional[0].rules.front(),
                                      "allow if arg0 == AF_UNIX", "otherwise errno EPERM"}));
}

TEST(Capabilities, PartlyWhenSomeOfWhatAQuestionNeedsRuns) {
  const Capabilities ipv4 =
      capabilities(parse_policy("default errno EPERM\nallow socket if arg0 == AF_INET\n", "ipv4"));
  EXPECT_EQ(answer_to(ipv4, "network_sockets"), Answer::partly);
  // Forking copies of itself without running another program is partly; exec alone is no.
  const Capabilities fork_only =
      capabilities(parse_policy("default errno EPERM\nallow clone\n", "fork"));
  EXPECT_EQ(answer_to(fork_only, "processes"), Answer::partly);
  const Capabilities exec_only =
      capabilities(parse_policy("default errno EPERM\nallow execve\n", "exec"));
  EXPECT_EQ(answer_to(exec_only, "processes"), Answer::no);
}

// The review's policy: only IPv6 sockets with SOCK_CLOEXEC, only clone(SIGCHLD). Both run, so
// neither answer may be no, whatever flags a typical program would have passed.
constexpr const char* kCap2 =
    "default errno EPERM\n"
    "allow socket if arg0 == AF_INET6 && (arg1 & SOCK_CLOEXEC) != 0\n"
    "errno EPERM socket\n"
    "allow clone if arg0 == SIGCHLD\n"
    "errno EPERM clone fork vfork\n"
    "include \"default\"\n";

TEST(Capabilities, AnswersFromThePolicysOwnConditionsNotFixedArguments) {
  const Policy cap2 = parse_policy(kCap2, "cap2.policy");
  ASSERT_TRUE(runs(cap2, "clone", SIGCHLD));
  const Capabilities c = capabilities(cap2);
  // IPv6 runs, with SOCK_CLOEXEC; IPv4 does not.
  EXPECT_EQ(answer_to(c, "network_sockets"), Answer::partly);
  // clone(SIGCHLD) creates a process and execve runs.
  EXPECT_EQ(answer_to(c, "processes"), Answer::yes);
}

// Each of these lets a call run at arguments no fixed probe passes: a "no" would be wrong.
TEST(Capabilities, NoOnlyWhenNoArgumentTheQuestionCountsRuns) {
  struct Case {
    const char* rule;
    const char* key;
  } const cases[] = {
      {"allow socket if arg0 == AF_INET && arg2 == IPPROTO_TCP", "network_sockets"},
      {"allow socket if arg0 == AF_PACKET", "network_sockets"},
      {"allow clone if arg0 == CLONE_VM | CLONE_VFORK | SIGCHLD", "processes"},  // posix_spawn
      {"allow clone if arg0 == CLONE_VM | CLONE_SIGHAND | CLONE_THREAD", "threads"},
      {"allow openat if (arg2 & O_CLOEXEC) != 0", "write_files"},
      {"allow pidfd_getfd", "other_processes"},
      {"allow kcmp", "other_processes"},
      {"allow ptrace if arg0 > PTRACE_ATTACH && arg0 < PTRACE_DETACH || arg0 == PTRACE_SEIZE",
       "other_processes"},
  };
  for (const Case& k : cases) {
    const Capabilities c =
        capabilities(parse_policy(std::string("default errno EPERM\n") + k.rule + "\n", "p"));
    EXPECT_NE(answer_to(c, k.key), Answer::no) << k.rule;
  }
  // And what the questions do not count stays no: an AF_NETLINK socket, PTRACE_TRACEME, a
  // read-only open.
  for (const Case& k : {Case{"allow socket if arg0 == AF_NETLINK", "network_sockets"},
                        Case{"allow ptrace if arg0 == PTRACE_TRACEME", "other_processes"},
                        Case{"allow openat if (arg2 & O_ACCMODE) == O_RDONLY && "
                             "(arg2 & O_CREAT) == 0 && (arg2 & O_TRUNC) == 0",
                             "write_files"}}) {
    const Capabilities c =
        capabilities(parse_policy(std::string("default errno EPERM\n") + k.rule + "\n", "p"));
    EXPECT_EQ(answer_to(c, k.key), Answer::no) << k.rule;
  }
}

// --- the CLI

using policy_test::CliRun;

CliRun explain(std::vector<std::string> words) {
  words.insert(words.begin(), {"explain", "--capabilities"});
  return policy_test::run_policy_cli(std::move(words));
}

TEST(CapabilitiesCli, TextIsASummaryWithAnswersAndTheJailsWalls) {
  CliRun r = explain({"default"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LT(std::count(r.out.begin(), r.out.end(), '\n'), 150) << r.out;
  EXPECT_NE(r.out.find("\nnetwork: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nkernel interfaces: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  yes     start threads?\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  no      trace or read other processes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ptrace(PTRACE_ATTACH), ptrace(PTRACE_SEIZE): kill"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--net none"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no_new_privs"), std::string::npos) << r.out;

  CliRun with_syscall = explain({"default", "read"});
  EXPECT_EQ(with_syscall.code, 2);
  EXPECT_NE(with_syscall.err.find("--capabilities"), std::string::npos) << with_syscall.err;
}

TEST(CapabilitiesCli, ShowsTheCallThatRunsAndWhetherOthersAreRefused) {
  policy_test::ScratchDir scratch;
  const std::string cap2 = scratch.write("cap2.policy", kCap2);
  CliRun r = explain({cap2});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  partly  open network sockets"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("socket(AF_INET6, SOCK_CLOEXEC): allow (some arguments)"), std::string::npos)
      << r.out;
  // The clone tried is named by the flags it was tried with.
  EXPECT_NE(r.out.find("clone(SIGCHLD): allow (some arguments)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("as fork"), std::string::npos) << r.out;

  const auto j = nlohmann::json::parse(explain({cap2, "--format", "json"}).out);
  const auto& network = j["questions"][0];
  ASSERT_EQ(network["key"], "network_sockets");
  EXPECT_EQ(network["answer"], "partly");
  EXPECT_EQ(network["needs"][1]["calls"][0]["runs"], "partly");
  EXPECT_EQ(network["needs"][1]["calls"][0]["at"], "socket(AF_INET6, SOCK_CLOEXEC)");
  EXPECT_EQ(network["needs"][0]["calls"][0]["runs"], "no");
  EXPECT_TRUE(network["needs"][0]["calls"][0]["at"].is_null());
  EXPECT_EQ(network["needs"][2]["extra"], true);
}

TEST(CapabilitiesCli, Json) {
  CliRun r = explain({"minimal", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["policy"], "minimal.policy");
  EXPECT_EQ(j["default"], "kill");
  EXPECT_TRUE(j["categories"]["network"]["allowed"].empty());
  EXPECT_EQ(j["categories"]["network"]["refused"][0]["how"], "kill");
  ASSERT_TRUE(j["questions"].is_array());
  EXPECT_EQ(j["questions"][0]["key"], "network_sockets");
  EXPECT_EQ(j["questions"][0]["answer"], "no");
  EXPECT_EQ(j["questions"][0]["needs"][0]["calls"][0]["action"], "kill");
  EXPECT_FALSE(j["jail_blocks"]["walls"].empty());
  EXPECT_TRUE(j["jail_blocks"]["scope"].is_string());
}

}  // namespace
}  // namespace jail::policy
