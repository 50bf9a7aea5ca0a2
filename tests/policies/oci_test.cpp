// OCI / Docker / Podman seccomp profiles in and out: the real Docker and Podman profiles
// import, the imported Docker policy runs real programs in the kernel and denies what Docker
// denies, import → export → import keeps every decision, and what has no faithful form is
// refused with the reason.
#include <errno.h>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "kernel_harness.hpp"
#include "policy/evaluate.hpp"
#include "policy/oci.hpp"
#include "policy/syscalls.hpp"
#include "policy/tools.hpp"
#include "policy_cli.hpp"
#include "policy_command.hpp"

namespace jail::policy {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// Docker's and Podman's real profiles, kept in the repository (fixtures/seccomp/README.md).
std::string fixture(const std::string& name) {
  std::string path = std::string(SECCOMP_FIXTURES_DIR) + "/" + name;
  if (!fs::exists(path))
    ADD_FAILURE() << "missing test input " << path
                  << ": the seccomp fixtures belong in tests/policies/fixtures/seccomp";
  return path;
}

std::string sample(const std::string& name) {
  return std::string(POLICY_SAMPLES_DIR) + "/" + name;
}

// Imported with a fixed kernel so the text does not depend on the machine.
Policy import_file(const std::string& path, const std::string& kernel = "6.18.0") {
  ImportTarget target;
  target.kernel_release = kernel;
  std::string text =
      import_oci_seccomp(read_file(path), fs::path(path).filename().string(), target);
  return parse_policy(text, fs::path(path).filename().string() + ".policy");
}

Policy import_json(const json& j, const std::string& name) {
  ImportTarget target;
  target.kernel_release = "6.18.0";
  return parse_policy(import_oci_seccomp(j.dump(), name, target), name + ".policy");
}

Decision decide(const Policy& p, int nr, const std::array<std::uint64_t, 6>& args) {
  seccomp_data d{};
  d.nr = nr;
  d.arch = AUDIT_ARCH_X86_64;
  for (int i = 0; i < 6; ++i) d.args[i] = args[static_cast<std::size_t>(i)];
  return evaluate(p, d);
}

void collect(const Condition& c, std::map<int, std::set<std::uint64_t>>& values) {
  if (c.kind != Condition::Kind::compare) {
    for (const auto& op : c.operands) collect(op, values);
    return;
  }
  auto& s = values[c.arg];
  const std::uint64_t high = std::uint64_t{1} << 32;
  for (std::uint64_t v : {c.value, c.value - 1, c.value + 1, c.value | ~c.mask, c.mask,
                          c.value ^ (c.mask & (~c.mask + 1)), c.value | high, c.value + high,
                          (c.value - 1) & c.mask, (c.value + 1) & c.mask})
    s.insert(v);
}

// Argument vectors that sit on both sides of every comparison the policies make for `nr`:
// each constant, its neighbours, its bits under and outside the mask, and high halves set;
// one argument at a time from both policies, and every pair of arguments from the first (the
// source's own constants; the second's are derived from them and would only multiply).
std::vector<std::array<std::uint64_t, 6>> probes(int nr, const Policy& a, const Policy& b) {
  auto values_of = [nr](const Policy& p) {
    std::map<int, std::set<std::uint64_t>> values;
    for (const Rule* r : p.rules_for(nr))
      if (r->condition) collect(*r->condition, values);
    for (auto& [arg, vs] : values) {
      vs.insert(0);
      vs.insert(~0ULL);
    }
    return values;
  };
  std::map<int, std::set<std::uint64_t>> first = values_of(a), second = values_of(b);
  std::vector<std::array<std::uint64_t, 6>> out = {{}, {~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL}};
  for (const auto* values : {&first, &second})
    for (const auto& [arg, vs] : *values)
      for (std::uint64_t v : vs) {
        std::array<std::uint64_t, 6> x{};
        x[static_cast<std::size_t>(arg)] = v;
        out.push_back(x);
      }
  for (auto i = first.begin(); i != first.end(); ++i)
    for (auto j = std::next(i); j != first.end(); ++j)
      for (std::uint64_t vi : i->second)
        for (std::uint64_t vj : j->second) {
          std::array<std::uint64_t, 6> x{};
          x[static_cast<std::size_t>(i->first)] = vi;
          x[static_cast<std::size_t>(j->first)] = vj;
          out.push_back(x);
        }
  return out;
}

// Every syscall number the table knows, plus a few past its end.
std::vector<int> every_syscall() {
  std::set<int> nrs;
  for (const auto& name : all_syscall_names())
    if (auto nr = syscall_number(name); nr && *nr >= 0) nrs.insert(*nr);
  int top = nrs.empty() ? 0 : *nrs.rbegin();
  for (int nr = 0; nr <= top + 8; ++nr) nrs.insert(nr);
  return {nrs.begin(), nrs.end()};
}

// Only the rules of one syscall, so evaluate() does not scan thousands of others per probe.
Policy only(const Policy& p, int nr) {
  Policy out;
  out.default_action = p.default_action;
  for (const Rule* r : p.rules_for(nr)) out.rules.push_back(*r);
  return out;
}

void expect_same_decisions(const Policy& a, const Policy& b) {
  std::size_t checked = 0;
  for (int nr : every_syscall()) {
    Policy pa = only(a, nr), pb = only(b, nr);
    for (const auto& args : probes(nr, pa, pb)) {
      Action x = decide(pa, nr, args).action, y = decide(pb, nr, args).action;
      ++checked;
      if (x == y) continue;
      ADD_FAILURE() << syscall_name(nr) << "(" << std::hex << args[0] << ", " << args[1] << ", "
                    << args[2] << ", …): " << to_string(x) << " vs " << to_string(y);
      return;
    }
  }
  EXPECT_GT(checked, 1000u);
}

// Whether every comparison of one OCI entry holds for these arguments.
bool args_hold(const json& entry, const std::array<std::uint64_t, 6>& args) {
  for (const auto& c : entry.value("args", json::array())) {
    std::uint64_t x = args[c["index"].get<std::size_t>()];
    std::uint64_t v = c["value"], v2 = c.value("valueTwo", std::uint64_t{0});
    std::string op = c["op"];
    bool ok = op == "SCMP_CMP_EQ"   ? x == v
              : op == "SCMP_CMP_NE" ? x != v
              : op == "SCMP_CMP_LT" ? x < v
              : op == "SCMP_CMP_LE" ? x <= v
              : op == "SCMP_CMP_GT" ? x > v
              : op == "SCMP_CMP_GE" ? x >= v
                                    : (x & v) == v2;
    if (!ok) return false;
  }
  return true;
}

// libseccomp's reading of an OCI profile, for checking export without import: the first
// entry without args decides its syscall; otherwise the matching entries, which must agree.
Action oci_decide(const json& profile, const std::string& name,
                  const std::array<std::uint64_t, 6>& args) {
  auto action_of = [](const json& j, const char* key, const char* errno_key) {
    std::string a = j[key];
    if (a == "SCMP_ACT_ALLOW") return Action{ActionKind::allow, 0};
    if (a == "SCMP_ACT_KILL_PROCESS") return Action{ActionKind::kill, 0};
    if (a == "SCMP_ACT_LOG") return Action{ActionKind::log, 0};
    if (a == "SCMP_ACT_TRAP") return Action{ActionKind::trap, 0};
    return Action{ActionKind::errno_code, j[errno_key].get<std::uint16_t>()};
  };
  std::optional<Action> matched;
  for (const auto& e : profile["syscalls"]) {
    bool named = false;
    for (const auto& n : e["names"]) named = named || n == name;
    if (!named) continue;
    Action a = action_of(e, "action", "errnoRet");
    if (!e.contains("args") || e["args"].empty()) return a;
    if (!args_hold(e, args)) continue;
    EXPECT_TRUE(!matched || *matched == a) << name << ": entries with different actions overlap";
    matched = a;
  }
  return matched.value_or(action_of(profile, "defaultAction", "defaultErrnoRet"));
}

// What the tool gets: OCI has no word for a refusal the jail leaves unreported ("quietly").
std::string decision_text(Action action) {
  action.quiet = false;
  return to_string(action);
}

void expect_export_matches(const Policy& p) {
  json out = export_oci_seccomp(p);
  std::map<std::string, json> by_name;  // each syscall's entries alone, as a small profile
  for (const auto& e : out["syscalls"])
    for (const auto& n : e["names"]) {
      json& mine = by_name[n.get<std::string>()];
      if (mine.is_null()) {
        mine = json{{"defaultAction", out["defaultAction"]}, {"syscalls", json::array()}};
        if (out.contains("defaultErrnoRet")) mine["defaultErrnoRet"] = out["defaultErrnoRet"];
      }
      mine["syscalls"].push_back(e);
    }
  for (int nr : p.syscalls()) {
    Policy pn = only(p, nr);
    std::string name = syscall_name(nr);
    json none = json{{"defaultAction", out["defaultAction"]},
                     {"defaultErrnoRet", out.value("defaultErrnoRet", 0)},
                     {"syscalls", json::array()}};
    const json& mine = by_name.count(name) != 0 ? by_name[name] : none;
    for (const auto& args : probes(nr, pn, pn))
      ASSERT_EQ(decision_text(oci_decide(mine, name, args)),
                decision_text(decide(pn, nr, args).action))
          << name << "(" << std::hex << args[0] << ", " << args[1] << ", " << args[2] << ")";
  }
}

TEST(OciImport, DockerProfileReadsForThisKernelWithoutCapabilities) {
  std::string text = import_oci_seccomp(read_file(fixture("docker-default.json")),
                                        "docker-default.json", ImportTarget{"6.18.0", {}});
  EXPECT_NE(text.find("# Imported from docker-default.json"), std::string::npos) << text;
  EXPECT_NE(text.find("\ndefault errno EPERM\n"), std::string::npos);
  EXPECT_NE(text.find("allow socket if arg0 < 38\n"), std::string::npos) << text;
  EXPECT_NE(text.find("allow personality if arg0 == 0xffffffff\n"), std::string::npos);
  EXPECT_NE(text.find("allow clone if (arg0 & 0x7e020000) == 0\n"), std::string::npos);
  // The baseline answers clone3 first: a rule for it would never apply, and `jail policy check`
  // warned of that on every import of this profile.
  EXPECT_EQ(text.find("errno ENOSYS clone3\n"), std::string::npos) << text;
  EXPECT_NE(
      text.find("# syscalls[20] does not apply to clone3 (the baseline: quietly errno ENOSYS)"),
      std::string::npos)
      << text;
  // Kept: minKernel 4.8 ≤ 6.18, with a line above the dangerous names for lint.
  EXPECT_NE(text.find("allow process_vm_readv process_vm_writev ptrace\n"), std::string::npos);
  // Left out: capabilities, other architectures, with the entry's comment kept.
  EXPECT_NE(text.find("# Left out: syscalls[17] (bpf clone clone3"), std::string::npos);
  EXPECT_NE(text.find("needs CAP_SYS_ADMIN (the jail's tool has no capabilities)"),
            std::string::npos);
  EXPECT_NE(text.find("only for s390, s390x — s390 parameter ordering for clone is"),
            std::string::npos);
  EXPECT_NE(text.find("SCMP_ARCH_X86, SCMP_ARCH_X32,"), std::string::npos);

  Policy p = parse_policy(text, "docker.policy");
  EXPECT_TRUE(lint(p).empty()) << format(lint(p));
  auto action = [&](const char* name, std::array<std::uint64_t, 6> args = {}) {
    return to_string(decide(p, *syscall_number(name), args).action);
  };
  EXPECT_EQ(action("read"), "allow");
  EXPECT_EQ(action("sethostname"), "errno EPERM");
  EXPECT_EQ(action("mount"), "errno EPERM");
  EXPECT_EQ(action("bpf"), "errno EPERM");
  EXPECT_EQ(action("socket", {40}), "errno EPERM");  // AF_VSOCK
  EXPECT_EQ(action("socket", {2}), "allow");
  EXPECT_EQ(action("clone", {SIGCHLD}), "allow");
  EXPECT_EQ(action("unshare", {CLONE_NEWUSER}), "kill");  // the baseline, before Docker's rules
  EXPECT_EQ(action("ptrace"), "allow");

  // On a kernel older than 4.8 the ptrace entry drops out.
  Policy old = import_file(fixture("docker-default.json"), "4.4.0");
  EXPECT_EQ(to_string(decide(old, *syscall_number("ptrace"), {}).action), "errno EPERM");
}

TEST(OciImport, PodmanProfileFollowsLibseccompForRepeatedNames) {
  Policy p = import_file(fixture("podman-default.json"));
  auto action = [&](const char* name, std::array<std::uint64_t, 6> args = {}) {
    return to_string(decide(p, *syscall_number(name), args).action);
  };
  EXPECT_EQ(to_string(p.default_action), "errno ENOSYS");
  EXPECT_EQ(action("read"), "allow");
  EXPECT_EQ(action("chroot"), "errno EPERM");
  EXPECT_EQ(action("socket", {16, 3, 9}), "errno EINVAL");  // NETLINK_AUDIT
  EXPECT_EQ(action("socket", {16, 3, 0}), "allow");
  // setns is allowed by the big list and denied by a later entry: libseccomp keeps the first
  // rule without conditions, so it is allowed, and the text says why.
  EXPECT_EQ(action("setns"), "allow");
  std::string text = import_oci_seccomp(read_file(fixture("podman-default.json")),
                                        "podman-default.json", ImportTarget{"6.18.0", {}});
  EXPECT_NE(text.find("# syscalls[16] does not apply to setns: syscalls[1] decides it without "
                      "conditions"),
            std::string::npos)
      << text;
}

TEST(OciImport, KeepsCommentsAndMapsEveryActionAndComparison) {
  std::string text = import_oci_seccomp(read_file(sample("oci_commented.json")),
                                        "oci_commented.json", ImportTarget{"6.18.0", {}});
  for (const char* line : {
           "# plain I/O and exiting\nallow read write close exit exit_group brk fstat "
           "rt_sigreturn\n",
           "# debuggers are not welcome\n# not even strace\n# SCMP_ACT_KILL_THREAD kills one "
           "thread in libseccomp; the jail kills the whole process.\nkill ptrace\n",
           "# unix sockets only\nallow socket if arg0 == 1\n",
           "errno EAFNOSUPPORT socket if arg0 != 1 && arg1 <= 2\n",
           "# no executable mappings\nallow mmap if (arg2 & 4) == 0\n",
           "log mprotect if (arg2 & 4) == 4\n",
           "allow lseek if arg2 < 2\n",
           "trap lseek if arg2 >= 3\n",
           "allow dup3 if arg2 > 0\n",
           "# a tracer would decide\n# SCMP_ACT_TRACE: no tracer is attached in the jail, and "
           "then the kernel fails the call with\n#   ENOSYS.\nerrno ENOSYS kill\n",
           "only with a capability",
           "# same as the default\n# syscalls[11] (getpid) has the default's action: libseccomp "
           "refuses such rules",
           "# syscalls[13] does not apply to gettid: syscalls[12] decides it",
           "SCMP_ARCH_X86, SCMP_ARCH_X32",
       })
    EXPECT_NE(text.find(line), std::string::npos) << "missing:\n" << line << "\nin:\n" << text;
  Policy p = parse_policy(text, "commented.policy");
  EXPECT_EQ(to_string(decide(p, *syscall_number("getpid"), {}).action), "allow");
  EXPECT_EQ(to_string(decide(p, *syscall_number("gettid"), {}).action), "allow");
  EXPECT_EQ(to_string(decide(p, *syscall_number("lseek"), {0, 0, 2}).action), "errno EPERM");
}

TEST(OciImport, ReadsTheSeccompObjectOfAnOciConfig) {
  Policy p = import_file(sample("oci_config.json"));
  EXPECT_EQ(to_string(p.default_action), "kill");
  EXPECT_EQ(to_string(decide(p, *syscall_number("openat"), {}).action), "errno EACCES");
  EXPECT_EQ(to_string(decide(p, *syscall_number("write"), {}).action), "allow");
}

TEST(OciImport, RefusesWhatHasNoDefinedMeaning) {
  auto error_of = [](const std::string& path) -> std::string {
    try {
      (void)import_oci_seccomp(read_file(path), fs::path(path).filename().string());
    } catch (const ImportError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error_of(sample("oci_bad.json")),
            "oci_bad.json:4:25: invalid JSON: syntax error while parsing object - unexpected "
            "string literal; expected '}'\n"
            "    { \"names\": [\"read\"] \"action\": \"SCMP_ACT_ALLOW\" }\n"
            "                        ^");
  std::string amb = error_of(sample("oci_ambiguous.json"));
  EXPECT_NE(amb.find("oci_ambiguous.json: syscalls[0] and syscalls[1]: both match socket when "
                     "(arg0 & 0xffffffff) == 16 && "),
            std::string::npos)
      << amb;
  EXPECT_NE(amb.find("libseccomp does not order conditional rules"), std::string::npos) << amb;
  std::string dbl = error_of(sample("oci_double_arg.json"));
  EXPECT_NE(dbl.find("syscalls[0].args[1]: a second comparison of arg2 in one entry: libseccomp "
                     "refuses that rule (EINVAL)"),
            std::string::npos)
      << dbl;
  auto refused = [](const json& j) -> std::string {
    try {
      (void)import_oci_seccomp(j.dump(), "x.json");
    } catch (const ImportError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(refused(json{{"defaultAction", "SCMP_ACT_NOTIFY"}}).find("listener agent"),
            std::string::npos);
  EXPECT_NE(refused(json{{"defaultAction", "SCMP_ACT_ERRNO"}, {"defaultErrnoRet", 0}})
                .find("x.json: defaultErrnoRet: errno 0 is out of range"),
            std::string::npos);
  EXPECT_NE(refused(json::parse(R"({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names":
            ["read"], "action": "SCMP_ACT_ERRNO", "errnoRet": "EPERM"}]})"))
                .find("x.json: syscalls[0].errnoRet: expected an errno number"),
            std::string::npos);
  // runc and crun refuse a profile naming an architecture libseccomp does not know; an import
  // that dropped it as "another architecture" would hide the typo.
  EXPECT_NE(refused(json{{"defaultAction", "SCMP_ACT_ALLOW"},
                         {"architectures", {"SCMP_ARCH_X86_64", "SCMP_ARCH_FOO"}}})
                .find("x.json: architectures[1]: unknown architecture 'SCMP_ARCH_FOO'"),
            std::string::npos);
  EXPECT_NE(refused(json::parse(R"({"defaultAction": "SCMP_ACT_ALLOW", "archMap": [{
            "architecture": "SCMP_ARCH_X86_64", "subArchitectures": ["X86"]}]})"))
                .find("x.json: archMap[0].subArchitectures[0]: unknown architecture 'X86'"),
            std::string::npos);
  EXPECT_EQ(refused(json{{"defaultAction", "SCMP_ACT_ALLOW"},
                         {"architectures",
                          {"SCMP_ARCH_X86_64", "SCMP_ARCH_LOONGARCH64", "SCMP_ARCH_RISCV64"}}}),
            "no error");
  EXPECT_NE(refused(json{{"ociVersion", "1.0.2"}}).find("not a seccomp profile"),
            std::string::npos);
  EXPECT_NE(refused(json{{"linux", {{"seccomp", json::object()}}}})
                .find("x.json: linux.seccomp: no 'defaultAction'"),
            std::string::npos);
  EXPECT_NE(refused(json::parse(R"({"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names":
            ["read"], "action": "SCMP_ACT_ALOW"}]})"))
                .find("x.json: syscalls[0].action: unknown action 'SCMP_ACT_ALOW'"),
            std::string::npos);
}

// Three ways a profile or policy said one thing and meant another. A bound above 0xffffffff on
// an argument the kernel reads as a 32-bit int was cut to its low half (`>= 2^32` on socket's
// domain became `>= 0`: every socket call denied); it is refused, in a policy and in an import,
// while a negative equality value (sign-extended) still narrows. A line break in any string of
// a profile became a line — a rule — of the imported policy. And a MASKED_EQ whose valueTwo has
// bits outside the mask reads as libseccomp reads it, with those bits dropped.
TEST(OciImport, NothingChangesMeaningOnTheWayIn) {
  const LoadResult cut =
      try_parse_policy("default allow\nerrno EACCES socket if arg0 >= 0x100000000\n", "cut.policy");
  ASSERT_FALSE(cut.policy.has_value());
  ASSERT_FALSE(cut.diagnostics.empty());
  EXPECT_NE(cut.diagnostics.back().message.find("does not fit in one"), std::string::npos)
      << cut.diagnostics.back().message;
  const LoadResult negative =
      try_parse_policy("default allow\nerrno EACCES openat if arg0 == -100\n", "neg.policy");
  ASSERT_TRUE(negative.policy.has_value());
  EXPECT_EQ(decide(*negative.policy, 257, {0xffffff9cULL, 0, 0, 0, 0, 0}).action.errno_value,
            EACCES);

  try {
    (void)import_json(json::parse(R"({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
        {"names": ["socket"], "action": "SCMP_ACT_ERRNO",
         "args": [{"index": 0, "value": 4294967296, "op": "SCMP_CMP_GE"}]}]})"),
                      "cut.json");
    ADD_FAILURE() << "a 64-bit bound on a 32-bit argument was imported";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("syscalls[0]: args index 0 of socket"), std::string::npos)
        << e.what();
  }

  // An architecture's name with a line break that would be a rule: refused as no architecture,
  // and said on one line.
  try {
    (void)import_json(json::parse(R"({"defaultAction": "SCMP_ACT_ERRNO",
        "architectures": ["SCMP_ARCH_X86_64", "A\nallow\tptrace\n#"]})"),
                      "injected.json");
    ADD_FAILURE() << "an architecture that is a rule was imported";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown architecture 'A\\x0aallow\\x09ptrace"),
              std::string::npos)
        << e.what();
  }
  const json injected = json::parse(R"({"defaultAction": "SCMP_ACT_ERRNO",
      "architectures": ["SCMP_ARCH_X86_64"],
      "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ALLOW"},
        {"names": ["s390_runtime_instr"], "action": "SCMP_ACT_ALLOW",
         "includes": {"arches": ["s390x"]}, "comment": "x\nallow\tprocess_vm_writev\n#"},
        {"names": ["b\nallow\tkill\n#"], "action": "SCMP_ACT_ALLOW"}]})");
  const Policy quiet = import_json(injected, "injected.json");
  for (const int nr : {101, 311, 62}) {  // ptrace, process_vm_writev, kill
    EXPECT_EQ(decide(quiet, nr, {}).action.kind, ActionKind::errno_code) << nr;
  }

  const Policy masked = import_json(json::parse(R"({"defaultAction": "SCMP_ACT_ALLOW",
      "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13,
      "args": [{"index": 2, "value": 255, "valueTwo": 257, "op": "SCMP_CMP_MASKED_EQ"}]}]})"),
                                    "masked.json");
  EXPECT_EQ(decide(masked, 0, {0, 0, 0x101, 0, 0, 0}).action.errno_value, EACCES);
  EXPECT_EQ(decide(masked, 0, {0, 0, 0x1, 0, 0, 0}).action.errno_value, EACCES);
  EXPECT_EQ(decide(masked, 0, {0, 0, 0x2, 0, 0, 0}).action.kind, ActionKind::allow);
}

// A --kernel that is not a release was taken as meeting every minKernel; errno 4095 passed here
// and then stopped runc/crun (libseccomp refuses it); the newest x86_64 calls have names.
TEST(OciImport, KernelErrnoAndNewestNamesAreChecked) {
  try {
    (void)import_oci_seccomp(R"({"defaultAction": "SCMP_ACT_ERRNO"})", "k.json",
                             ImportTarget{"garbage", {}});
    ADD_FAILURE() << "a kernel release that is not one was accepted";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a release"), std::string::npos) << e.what();
  }
  try {
    (void)import_json(json::parse(R"({"defaultAction": "SCMP_ACT_ERRNO",
                                      "defaultErrnoRet": 4095})"),
                      "e.json");
    ADD_FAILURE() << "errno 4095 was accepted";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("4094"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(try_parse_policy("default errno 4095\n", "e.policy").policy.has_value());
  for (const auto& [name, nr] : std::vector<std::pair<std::string, int>>{
           {"setxattrat", 463}, {"removexattrat", 466}, {"file_setattr", 469}}) {
    EXPECT_EQ(syscall_number(name), nr) << name;
  }
}

// A name no architecture has (a typo, or a call newer than the jail) in an entry that refuses
// what the default allows would, left out, let the call through: refused. Where the default
// refuses at least as much, it is left out and named as unknown, not as another architecture's.
TEST(OciImport, AnUnknownNameThatWouldOpenAHoleIsRefused) {
  try {
    (void)import_json(json::parse(R"({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
                                      {"names": ["ptrace", "opne"],
                                       "action": "SCMP_ACT_KILL_PROCESS"}]})"),
                      "typo.json");
    ADD_FAILURE() << "a deny-list entry with an unknown name was imported";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("'opne' is no system call"), std::string::npos)
        << e.what();
  }
  ImportTarget target;
  target.kernel_release = "6.18.0";
  const std::string allow_list = import_oci_seccomp(R"({"defaultAction": "SCMP_ACT_ERRNO",
      "syscalls": [{"names": ["read", "opne", "socketcall"], "action": "SCMP_ACT_ALLOW"}]})",
                                                    "allow.json", target);
  EXPECT_NE(allow_list.find("# Unknown names, left out (they fall to the default, which refuses "
                            "at least as much): opne"),
            std::string::npos)
      << allow_list;
  EXPECT_NE(allow_list.find("# Not x86_64 syscalls, left out: socketcall"), std::string::npos)
      << allow_list;
}

// An entry is skipped as "the default's" only when libseccomp sees the same action, as runc
// does: an unconditional SCMP_ACT_KILL (KILL_THREAD) under a KILL_PROCESS default is a rule of
// its own there, which overrides a conditional ALLOW of the same call. The import dropped it
// (the jail kills the process for both) and so allowed read(3).
TEST(OciImport, SameAsDefaultIsLibseccompsReading) {
  const Policy p = import_json(json::parse(R"({"defaultAction": "SCMP_ACT_KILL_PROCESS",
      "syscalls": [
        {"names": ["read"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 0, "value": 3, "op": "SCMP_CMP_EQ"}]},
        {"names": ["read"], "action": "SCMP_ACT_KILL"}]})"),
                               "kill.json");
  EXPECT_EQ(decide(p, 0, {3, 0, 0, 0, 0, 0}).action.kind, ActionKind::kill);
  const Policy trace = import_json(json::parse(R"({"defaultAction": "SCMP_ACT_ERRNO",
      "defaultErrnoRet": 38, "syscalls": [
        {"names": ["read"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 0, "value": 3, "op": "SCMP_CMP_EQ"}]},
        {"names": ["read"], "action": "SCMP_ACT_TRACE"}]})"),
                                   "trace.json");
  EXPECT_NE(decide(trace, 0, {3, 0, 0, 0, 0, 0}).action.kind, ActionKind::allow);
}

TEST(OciRoundTrip, ImportExportImportKeepsEveryDecision) {
  for (const std::string& path : {fixture("docker-default.json"), fixture("podman-default.json"),
                                  sample("oci_commented.json"), sample("oci_config.json")}) {
    SCOPED_TRACE(path);
    Policy first = import_file(path);
    json exported = export_oci_seccomp(first);
    Policy second = import_json(exported, "exported.json");
    expect_same_decisions(first, second);
    expect_export_matches(first);
  }
}

TEST(OciRoundTrip, ShippedPoliciesExportFaithfully) {
  for (const auto& name : shipped_policy_names()) {
    SCOPED_TRACE(name);
    Policy p = load_policy(name);
    json exported = export_oci_seccomp(p);
    EXPECT_EQ(exported["architectures"], json::array({"SCMP_ARCH_X86_64"}));
    expect_export_matches(p);
    expect_same_decisions(p, import_json(exported, name + ".json"));
  }
}

TEST(OciExport, WritesTheBaselineAndRefusesWhatLibseccompCannotSay) {
  json out = export_oci_seccomp(load_policy("default"));
  EXPECT_EQ(out["defaultAction"], "SCMP_ACT_ERRNO") << out.dump(2);
  EXPECT_EQ(out["defaultErrnoRet"], EPERM);
  // default.policy kills unshare outright; the baseline's clone rule (kill with namespace
  // flags) becomes one MASKED_EQ entry per flag, since libseccomp has no masked "!=".
  bool unshare_kill = false;
  int clone_flag_kills = 0;
  for (const auto& e : out["syscalls"]) {
    bool kill = e["action"] == "SCMP_ACT_KILL_PROCESS";
    for (const auto& n : e["names"]) {
      unshare_kill = unshare_kill || (kill && n == "unshare");
      if (kill && n == "clone" && e["args"].size() == 1 &&
          e["args"][0]["op"] == "SCMP_CMP_MASKED_EQ")
        ++clone_flag_kills;
    }
  }
  EXPECT_TRUE(unshare_kill) << out.dump(2);
  EXPECT_EQ(clone_flag_kills, 7);
  try {
    (void)export_oci_seccomp(load_policy(sample("oci_unexportable.policy")));
    ADD_FAILURE() << "exported a policy libseccomp cannot express in bounded size";
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find("oci_unexportable.policy:4: the rule for read has no "
                                         "exact OCI form: the conditions expand to more than "
                                         "4096 libseccomp rules"),
              std::string::npos)
        << e.what();
  }
}

// gVisor's reading of a profile under runsc --oci-seccomp: the entries in order, the first
// whose names and comparisons match decides; SCMP_ACT_ERRNO is EPERM whatever the errnoRet;
// SCMP_ACT_TRACE, with no tracer attached, fails with ENOSYS.
Action runsc_decide(const json& profile, const std::string& name,
                    const std::array<std::uint64_t, 6>& args) {
  auto action_of = [](const json& j, const char* key) {
    const std::string a = j[key];
    if (a == "SCMP_ACT_ALLOW") return Action{ActionKind::allow, 0};
    if (a == "SCMP_ACT_TRAP") return Action{ActionKind::trap, 0};
    if (a == "SCMP_ACT_LOG") return Action{ActionKind::log, 0};
    if (a == "SCMP_ACT_TRACE") return Action{ActionKind::errno_code, ENOSYS};
    EXPECT_EQ(a, "SCMP_ACT_ERRNO") << "runsc refuses " << a;
    return Action{ActionKind::errno_code, EPERM};
  };
  for (const auto& e : profile["syscalls"]) {
    const auto& names = e["names"];
    if (std::find(names.begin(), names.end(), name) == names.end()) continue;
    if (args_hold(e, args)) return action_of(e, "action");
  }
  return action_of(profile, "defaultAction");
}

// What runsc can answer for a policy decision (policy/oci.hpp): a kill is a trap, and every
// errno is EPERM but ENOSYS, which stays when no tracer can take the call.
Action within_runsc_reach(const Action& a, bool enosys_kept) {
  if (a.kind == ActionKind::kill) return {ActionKind::trap, 0};
  if (a.kind != ActionKind::errno_code) return a;
  const bool enosys = a.errno_value == ENOSYS && enosys_kept;
  return {ActionKind::errno_code, static_cast<std::uint16_t>(enosys ? ENOSYS : EPERM)};
}

void expect_runsc_export_decides_as(const Policy& p, bool enosys_kept) {
  const json out = export_runsc_seccomp(p);
  std::size_t checked = 0;
  for (int nr : every_syscall()) {
    const Policy pn = only(p, nr);
    const std::string name = syscall_name(nr);
    for (const auto& args : probes(nr, pn, pn)) {
      ++checked;
      ASSERT_EQ(to_string(runsc_decide(out, name, args)),
                to_string(within_runsc_reach(decide(pn, nr, args).action, enosys_kept)))
          << name << "(" << std::hex << args[0] << ", " << args[1] << ", " << args[2] << ")";
    }
  }
  EXPECT_GT(checked, 1000u);
}

TEST(RunscExport, ShippedAndImportedPoliciesDecideAsRunscReadsThem) {
  for (const auto& name : shipped_policy_names()) {
    SCOPED_TRACE(name);
    expect_runsc_export_decides_as(load_policy(name), true);
  }
  for (const std::string& path : {fixture("docker-default.json"), fixture("podman-default.json"),
                                  sample("oci_commented.json")}) {
    SCOPED_TRACE(path);
    const Policy p = import_file(path);
    // Docker's and Podman's profiles allow ptrace (kernel >= 4.8), so their ENOSYS is EPERM.
    const bool ptrace_refused =
        decide(p, *syscall_number("ptrace"), {}).action.kind != ActionKind::allow;
    expect_runsc_export_decides_as(p, ptrace_refused);
  }
}

// The default policy's profile as runsc reads it: a fraction of the libseccomp form (runsc
// parses it at every start), clone3's ENOSYS kept through SCMP_ACT_TRACE (glibc then falls
// back to clone; EPERM would stop every thread), and pselect6 under gVisor's name as well.
TEST(RunscExport, DefaultPolicyIsSmallKeepsClone3sEnosysAndNamesPselectAsGvisorDoes) {
  const Policy p = load_policy("default");
  const json runsc = export_runsc_seccomp(p);
  const json any_runtime = export_oci_seccomp(p);
  EXPECT_LT(runsc["syscalls"].size() * 3, any_runtime["syscalls"].size())
      << runsc["syscalls"].size() << " entries against " << any_runtime["syscalls"].size();
  std::string clone3_action, pselect_names;
  for (const auto& e : runsc["syscalls"]) {
    for (const auto& n : e["names"]) {
      if (n == "clone3") clone3_action = e["action"];
      if (n == "pselect6") pselect_names = e["names"].dump();
    }
  }
  EXPECT_EQ(clone3_action, "SCMP_ACT_TRACE");
  EXPECT_NE(pselect_names.find("\"pselect\""), std::string::npos) << pselect_names;
  EXPECT_EQ(runsc.dump().find("SCMP_ACT_KILL"), std::string::npos) << "runsc refuses KILL";
}

// A tracer could take an SCMP_ACT_TRACE stop and let the call run, so where ptrace can run the
// ENOSYS rule is EPERM instead: still refused.
TEST(RunscExport, EnosysIsEpermWhenThePolicyLetsPtraceRun) {
  const Policy p =
      parse_policy("default errno EPERM\nallow read write exit_group ptrace\n", "traced.policy");
  const json out = export_runsc_seccomp(p);
  EXPECT_EQ(runsc_decide(out, "clone3", {}), (Action{ActionKind::errno_code, EPERM})) << out.dump();
  expect_runsc_export_decides_as(p, false);
}

// The first rule whose condition holds decides, so an `allow ptrace` behind an unconditional
// rule never runs; one ahead of it, a conditional one, or an allowing default does.
TEST(RunscExport, PtraceCanRunReadsTheRulesInOrder) {
  const auto can_run = [](const std::string& text) {
    return ptrace_can_run(parse_policy(text, "p.policy"));
  };
  EXPECT_FALSE(can_run("default errno EPERM\nallow read\n"));
  EXPECT_TRUE(can_run("default allow\nkill read\n"));
  EXPECT_FALSE(can_run("default allow\nerrno EPERM ptrace\n"));
  EXPECT_FALSE(can_run("default errno EPERM\nkill ptrace\nallow ptrace\n"));
  EXPECT_TRUE(can_run("default errno EPERM\nallow ptrace\nkill ptrace\n"));
  EXPECT_TRUE(can_run("default errno EPERM\nallow ptrace if arg0 == 0\nkill ptrace\n"));
  EXPECT_TRUE(can_run("default allow\nkill ptrace if arg0 == 16\n"));
  EXPECT_FALSE(can_run("default errno EPERM\nkill ptrace if arg0 == 16\n"));
}

const Program& docker_program() {
  static const Program prog = compile(import_file(fixture("docker-default.json")), Routing::direct);
  return prog;
}

TEST(OciKernel, ImportedDockerProfileDeniesNamespacesAndHostname) {
  EXPECT_EQ(testing::syscall_outcome(docker_program(), SYS_unshare, {CLONE_NEWUSER}), -SIGSYS);
  EXPECT_EQ(testing::syscall_outcome(docker_program(), SYS_sethostname,
                                     {reinterpret_cast<unsigned long>("x"), 1}),
            EPERM);
  EXPECT_EQ(testing::syscall_outcome(docker_program(), SYS_socket, {40 /* AF_VSOCK */, 1, 0}),
            EPERM);
  EXPECT_EQ(testing::syscall_outcome(docker_program(), SYS_getpid, {}), 0);
}

TEST(OciKernel, ImportedDockerProfileRunsOrdinaryTools) {
  testing::ChildEnd sh = testing::run_program(docker_program(), {"/bin/sh", "-c", "ls / | wc -l"});
  EXPECT_TRUE(sh.exited) << "signal " << sh.signal << "\n" << sh.output;
  EXPECT_EQ(sh.code, 0) << sh.output;
  EXPECT_GT(std::stoi(sh.output), 3) << sh.output;
  testing::ChildEnd py =
      testing::run_program(docker_program(), {"/usr/bin/python3", "-c", "print(1)"});
  EXPECT_TRUE(py.exited) << "signal " << py.signal << "\n" << py.output;
  EXPECT_EQ(py.code, 0) << py.output;
  EXPECT_EQ(py.output, "1\n");
}

// The exported profile loaded the way runc and crun load one: libseccomp's seccomp_init with
// the default, one seccomp_rule_add_array per entry and name (names this libseccomp does not
// know are skipped, as runc does), then seccomp_load in a forked child.
class LibseccompProfile {
 public:
  explicit LibseccompProfile(const json& profile) {
    ctx_ = seccomp_init(action(profile, "defaultAction", "defaultErrnoRet"));
    if (ctx_ == nullptr) throw std::runtime_error("seccomp_init failed");
    for (const auto& e : profile["syscalls"]) {
      std::vector<scmp_arg_cmp> args;
      if (e.contains("args"))
        for (const auto& a : e["args"])
          args.push_back(scmp_arg_cmp{a["index"].get<unsigned>(), op(a["op"]),
                                      a["value"].get<scmp_datum_t>(),
                                      a["valueTwo"].get<scmp_datum_t>()});
      for (const auto& n : e["names"]) {
        int nr = seccomp_syscall_resolve_name(n.get<std::string>().c_str());
        if (nr == __NR_SCMP_ERROR) {
          unknown_.push_back(n);
          continue;
        }
        int rc = seccomp_rule_add_array(ctx_, action(e, "action", "errnoRet"), nr,
                                        static_cast<unsigned>(args.size()), args.data());
        if (rc != 0) refused_.push_back(n.get<std::string>() + ": " + std::to_string(rc));
      }
    }
  }
  ~LibseccompProfile() { seccomp_release(ctx_); }
  LibseccompProfile(const LibseccompProfile&) = delete;
  LibseccompProfile& operator=(const LibseccompProfile&) = delete;

  // The program libseccomp builds, for running it in the test over many inputs.
  std::vector<sock_filter> bpf() const {
    int fd = memfd_create("oci-bpf", MFD_CLOEXEC);
    if (fd < 0 || seccomp_export_bpf(ctx_, fd) != 0) throw std::runtime_error("export_bpf");
    std::vector<sock_filter> prog(static_cast<std::size_t>(lseek(fd, 0, SEEK_END)) /
                                  sizeof(sock_filter));
    if (pread(fd, prog.data(), prog.size() * sizeof(sock_filter), 0) < 0)
      throw std::runtime_error("read back the BPF");
    close(fd);
    return prog;
  }

  const std::vector<std::string>& refused() const { return refused_; }
  const std::vector<std::string>& unknown() const { return unknown_; }

  // errno of syscall(nr, args…) under the filter, 0 on success, -SIG when a signal ended it.
  int outcome(long nr, std::vector<unsigned long> a) const {
    a.resize(6, 0);
    pid_t pid = fork();
    if (pid == 0) {
      if (seccomp_load(ctx_) != 0) _exit(testing::kInstallFailed);
      long r = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
      _exit(r == -1 ? errno : 0);
    }
    return wait_for(pid);
  }

  // Exit code of argv run under the filter (stdout and stderr to /dev/null), or -SIG.
  int run(const std::vector<std::string>& argv) const {
    std::vector<char*> args;
    for (const auto& w : argv) args.push_back(const_cast<char*>(w.c_str()));
    args.push_back(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
      FILE* null = std::freopen("/dev/null", "w", stdout);
      (void)null;
      if (seccomp_load(ctx_) != 0) _exit(testing::kInstallFailed);
      execv(args[0], args.data());
      _exit(127);
    }
    return wait_for(pid);
  }

 private:
  static int wait_for(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }
  static std::uint32_t action(const json& j, const char* key, const char* errno_key) {
    std::string a = j[key];
    if (a == "SCMP_ACT_ALLOW") return SCMP_ACT_ALLOW;
    if (a == "SCMP_ACT_KILL_PROCESS") return SCMP_ACT_KILL_PROCESS;
    if (a == "SCMP_ACT_LOG") return SCMP_ACT_LOG;
    if (a == "SCMP_ACT_TRAP") return SCMP_ACT_TRAP;
    return SCMP_ACT_ERRNO(j[errno_key].get<std::uint16_t>());
  }
  static scmp_compare op(const json& name) {
    static const std::map<std::string, scmp_compare> ops = {
        {"SCMP_CMP_NE", SCMP_CMP_NE},
        {"SCMP_CMP_LT", SCMP_CMP_LT},
        {"SCMP_CMP_LE", SCMP_CMP_LE},
        {"SCMP_CMP_EQ", SCMP_CMP_EQ},
        {"SCMP_CMP_GE", SCMP_CMP_GE},
        {"SCMP_CMP_GT", SCMP_CMP_GT},
        {"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ}};
    return ops.at(name.get<std::string>());
  }

  scmp_filter_ctx ctx_ = nullptr;
  std::vector<std::string> refused_, unknown_;
};

// Ranges go to libseccomp as MASKED_EQ blocks: with LE/GT rules on one argument, Debian 12's
// libseccomp 2.5.4 let lseek(fd, 0x80000000) through a policy that refuses it, and never
// returned from seccomp_rule_add for two rules sharing `arg1 > 4096` (runc would hang).
TEST(OciExport, RangesAreWrittenAsLibseccompEnforcesThem) {
  // Allowed by default, so that the child (and a sanitizer's runtime in it) can do what it
  // needs; lseek refused in two ranges of its offset.
  const Policy lseek = parse_policy(
      "default allow\n"
      "errno EPERM lseek if arg1 <= 0x100000\n"
      "errno EPERM lseek if arg1 > 0x7fffffffffffffff\n",
      "ranges.policy");
  const json exported = export_oci_seccomp(lseek);
  for (const auto& entry : exported["syscalls"]) {
    for (const auto& a : entry.value("args", json::array())) {
      const std::string op = a["op"];
      EXPECT_TRUE(op == "SCMP_CMP_MASKED_EQ" || op == "SCMP_CMP_EQ" || op == "SCMP_CMP_NE")
          << entry.dump();
    }
  }
  const LibseccompProfile loaded(exported);
  EXPECT_TRUE(loaded.refused().empty());
  EXPECT_EQ(loaded.outcome(SYS_lseek, {~0UL, 0x80000000UL, 0}), EBADF);
  EXPECT_EQ(loaded.outcome(SYS_lseek, {~0UL, 0x100000UL, 0}), EPERM);
  EXPECT_EQ(loaded.outcome(SYS_lseek, {~0UL, 0x100001UL, 0}), EBADF);
  EXPECT_EQ(loaded.outcome(SYS_lseek, {~0UL, 0x8000000000000000UL, 0}), EPERM);

  ::alarm(60);  // a hang in seccomp_rule_add ends the test binary instead of the whole run
  const Policy shared =
      parse_policy("default allow\nerrno EPERM mmap if arg1 > 4096 && (arg2 == 1 || arg3 == 1)\n",
                   "shared.policy");
  const LibseccompProfile second(export_oci_seccomp(shared));
  ::alarm(0);
  EXPECT_TRUE(second.refused().empty());
  EXPECT_EQ(second.outcome(SYS_mmap, {0, 8192, 1, 0x22, ~0UL, 0}), EPERM);
  EXPECT_EQ(second.outcome(SYS_mmap, {0, 4096, 1, 0x22, ~0UL, 0}), 0);
}

TEST(OciLibseccomp, EveryExportedRuleIsAcceptedByLibseccomp) {
  std::vector<std::pair<std::string, Policy>> policies;
  policies.emplace_back("docker", import_file(fixture("docker-default.json")));
  policies.emplace_back("podman", import_file(fixture("podman-default.json")));
  policies.emplace_back("commented", import_file(sample("oci_commented.json")));
  for (const auto& name : shipped_policy_names()) policies.emplace_back(name, load_policy(name));
  for (const auto& [name, p] : policies) {
    LibseccompProfile loaded(export_oci_seccomp(p));
    EXPECT_TRUE(loaded.refused().empty()) << name << ": " << loaded.refused().front();
  }
}

// Classic BPF as the kernel runs a seccomp filter (the instructions libseccomp emits).
std::uint32_t run_bpf(const std::vector<sock_filter>& prog, const seccomp_data& data) {
  unsigned char bytes[sizeof data];
  std::memcpy(bytes, &data, sizeof data);
  std::uint32_t a = 0;
  std::size_t pc = 0;
  while (pc < prog.size()) {
    const sock_filter& f = prog[pc];
    bool taken = false;
    switch (f.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        std::memcpy(&a, bytes + f.k, 4);
        ++pc;
        continue;
      case BPF_ALU | BPF_AND | BPF_K:
        a &= f.k;
        ++pc;
        continue;
      case BPF_RET | BPF_K:
        return f.k;
      case BPF_JMP | BPF_JA:
        pc += 1 + f.k;
        continue;
      case BPF_JMP | BPF_JEQ | BPF_K:
        taken = a == f.k;
        break;
      case BPF_JMP | BPF_JGT | BPF_K:
        taken = a > f.k;
        break;
      case BPF_JMP | BPF_JGE | BPF_K:
        taken = a >= f.k;
        break;
      case BPF_JMP | BPF_JSET | BPF_K:
        taken = (a & f.k) != 0;
        break;
      default:
        ADD_FAILURE() << "unexpected instruction " << f.code;
        return 0;
    }
    pc += 1 + (taken ? f.jt : f.jf);
  }
  ADD_FAILURE() << "ran off the end of the program";
  return 0;
}

std::uint32_t seccomp_ret(const Action& a) {
  switch (a.kind) {
    case ActionKind::allow:
      return SECCOMP_RET_ALLOW;
    case ActionKind::errno_code:
      return SECCOMP_RET_ERRNO | a.errno_value;
    case ActionKind::kill:
      return SECCOMP_RET_KILL_PROCESS;
    case ActionKind::log:
      return SECCOMP_RET_LOG;
    case ActionKind::trap:
      return SECCOMP_RET_TRAP;
  }
  return 0;
}

// libseccomp's own program for the exported profile against evaluate() on the policy: every
// syscall number, every probe. Syscalls this libseccomp cannot name are left out (runc skips
// them too, so there the default decides; see the export's documentation).
TEST(OciLibseccomp, LibseccompsProgramDecidesEveryProbeAsTheEvaluator) {
  std::vector<std::pair<std::string, Policy>> policies;
  policies.emplace_back("docker", import_file(fixture("docker-default.json")));
  policies.emplace_back("podman", import_file(fixture("podman-default.json")));
  policies.emplace_back("commented", import_file(sample("oci_commented.json")));
  for (const auto& name : shipped_policy_names()) policies.emplace_back(name, load_policy(name));
  for (const auto& [name, p] : policies) {
    SCOPED_TRACE(name);
    LibseccompProfile loaded(export_oci_seccomp(p));
    std::vector<sock_filter> prog = loaded.bpf();
    EXPECT_LE(prog.size(), std::size_t{BPF_MAXINSNS}) << "the kernel would refuse the program";
    std::set<std::string> unknown(loaded.unknown().begin(), loaded.unknown().end());
    std::size_t checked = 0;
    for (int nr : every_syscall()) {
      std::string sys = syscall_name(nr);
      if (unknown.count(sys) != 0 || sys.starts_with("syscall_")) continue;
      Policy pn = only(p, nr);
      for (const auto& args : probes(nr, pn, pn)) {
        seccomp_data d{};
        d.nr = nr;
        d.arch = AUDIT_ARCH_X86_64;
        for (int i = 0; i < 6; ++i) d.args[i] = args[static_cast<std::size_t>(i)];
        ++checked;
        ASSERT_EQ(run_bpf(prog, d), seccomp_ret(evaluate(pn, d).action))
            << sys << "(" << std::hex << args[0] << ", " << args[1] << ", " << args[2] << ")";
      }
    }
    EXPECT_GT(checked, 700u);
  }
}

TEST(OciLibseccomp, ExportedDockerPolicyDecidesInTheKernelAsTheJailDoes) {
  LibseccompProfile docker(export_oci_seccomp(import_file(fixture("docker-default.json"))));
  EXPECT_EQ(docker.outcome(SYS_getpid, {}), 0);
  EXPECT_EQ(docker.outcome(SYS_sethostname, {reinterpret_cast<unsigned long>("x"), 1}), EPERM);
  EXPECT_EQ(docker.outcome(SYS_socket, {40 /* AF_VSOCK */, 1, 0}), EPERM);
  EXPECT_EQ(docker.outcome(SYS_unshare, {CLONE_NEWUSER}), -SIGSYS);  // the jail's baseline
  EXPECT_EQ(docker.outcome(SYS_clone3, {}), ENOSYS);
  EXPECT_EQ(docker.outcome(SYS_ioctl, {0, TIOCSTI | (1UL << 32), 0}), EPERM);
  EXPECT_EQ(docker.outcome(SYS_mount, {}), EPERM);
  EXPECT_EQ(docker.run({"/bin/sh", "-c", "ls / | wc -l"}), 0);
  EXPECT_EQ(docker.run({"/usr/bin/python3", "-c", "print(1)"}), 0);

  LibseccompProfile podman(export_oci_seccomp(import_file(fixture("podman-default.json"))));
  EXPECT_EQ(podman.outcome(SYS_socket, {16 /* AF_NETLINK */, 3 /* SOCK_RAW */, 9}), EINVAL);
  EXPECT_EQ(podman.outcome(SYS_chroot, {reinterpret_cast<unsigned long>("/")}), EPERM);
  EXPECT_EQ(podman.outcome(SYS_getpid, {}), 0);
}

}  // namespace
}  // namespace jail::policy

namespace jail::runner {
namespace {

using policy_test::CliRun;

CliRun run(std::vector<std::string> words) {
  return policy_test::run_policy_cli(std::move(words));
}

class OciCli : public ::testing::Test {
 protected:
  policy_test::ScratchDir scratch_;
  const std::string& dir_ = scratch_.path();
};

TEST_F(OciCli, ImportExportImport) {
  std::string docker = std::string(SECCOMP_FIXTURES_DIR) + "/docker-default.json";
  std::string first = dir_ + "/docker.policy", json_out = dir_ + "/docker.json",
              second = dir_ + "/again.policy";
  CliRun imp = run({"import", docker, "-o", first, "--kernel", "6.18.0"});
  ASSERT_EQ(imp.code, 0) << imp.err;
  EXPECT_EQ(imp.out, "");
  EXPECT_EQ(run({"check", first}).code, 0);
  CliRun exp = run({"export", first, "--format", "oci", "-o", json_out});
  ASSERT_EQ(exp.code, 0) << exp.err;
  std::ifstream exported(json_out);
  EXPECT_EQ(nlohmann::json::parse(exported)["defaultAction"], "SCMP_ACT_ERRNO");
  ASSERT_EQ(run({"import", json_out, "-o", second}).code, 0);
  // `diff` compares rules as written; the decisions are what must be the same.
  jail::policy::expect_same_decisions(jail::policy::load_policy(first),
                                      jail::policy::load_policy(second));
  CliRun to_stdout = run({"export", "minimal"});
  EXPECT_EQ(to_stdout.code, 0) << to_stdout.err;
  EXPECT_NE(to_stdout.out.find("\"defaultAction\": \"SCMP_ACT_KILL_PROCESS\""), std::string::npos);
}

// For gVisor: the profile as runsc reads it (the one `jail --runtime runsc` hands runsc).
TEST_F(OciCli, ExportsTheRunscForm) {
  CliRun runsc = run({"export", "default", "--format", "runsc"});
  ASSERT_EQ(runsc.code, 0) << runsc.err;
  EXPECT_EQ(nlohmann::json::parse(runsc.out),
            jail::policy::export_runsc_seccomp(jail::policy::load_policy("default")));
  EXPECT_EQ(runsc.out.find("SCMP_ACT_KILL_PROCESS"), std::string::npos);
  EXPECT_NE(runsc.out.find("SCMP_ACT_TRACE"), std::string::npos);
}

TEST_F(OciCli, ErrorsExitOneWithTheReason) {
  CliRun bad = run({"import", std::string(POLICY_SAMPLES_DIR) + "/oci_bad.json"});
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("oci_bad.json:4:25: invalid JSON"), std::string::npos) << bad.err;
  CliRun missing = run({"import", dir_ + "/nosuch.json"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("cannot read"), std::string::npos);
  CliRun directory = run({"import", dir_});  // it said "invalid JSON at 1:1"
  EXPECT_EQ(directory.code, 1);
  EXPECT_NE(directory.err.find("is a directory"), std::string::npos) << directory.err;
  CliRun refused = run({"export", std::string(POLICY_SAMPLES_DIR) + "/oci_unexportable.policy"});
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.err.find("cannot express"), std::string::npos) << refused.err;
  EXPECT_EQ(run({"export", "minimal", "--format", "docker"}).code, 2);
  // The reason, not only the path.
  CliRun unwritable = run({"export", "minimal", "-o", dir_ + "/no-such-dir/out.json"});
  EXPECT_EQ(unwritable.code, 1);
  EXPECT_NE(unwritable.err.find("out.json: No such file or directory"), std::string::npos)
      << unwritable.err;
  CliRun no_policy = run({"export", dir_ + "/nosuch.policy"});
  EXPECT_EQ(no_policy.code, 1);
  EXPECT_NE(no_policy.err.find("cannot read the policy file: No such file or directory"),
            std::string::npos)
      << no_policy.err;
}

}  // namespace
}  // namespace jail::runner
