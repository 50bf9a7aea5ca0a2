// The questions a review turns on, each answered from the policy's own conditions: for every
// call a question asks about, the policy is evaluated at a point in each region its rules and
// the question's own condition make (exact, as diff's witnesses), at the boundaries of every
// comparison either makes (as diff's points), and first at the arguments programs really pass
// (glibc's clone flags for fork and for a thread, open flags, socket families). Only points the
// question counts are kept, so "no" means no argument value it counts makes the call run.
#include <fcntl.h>
#include <linux/bpf.h>
#include <sched.h>
#include <sys/socket.h>

#include <algorithm>
#include <csignal>
#include <initializer_list>
#include <stdexcept>

#include "diff_points.hpp"
#include "policy/capabilities.hpp"
#include "policy/diff.hpp"
#include "policy/evaluate.hpp"
#include "policy/syscalls.hpp"
#include "policy/value_names.hpp"

namespace jail::policy {
namespace {

// What glibc passes to clone for fork() and for pthread_create(), and posix_spawn's clone.
constexpr std::uint64_t kForkFlags = CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD;
constexpr std::uint64_t kSpawnFlags = CLONE_VM | CLONE_VFORK | SIGCHLD;
constexpr std::uint64_t kThreadFlags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
                                       CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS |
                                       CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
constexpr std::uint64_t kMode = 0644;

// The boundary points are a fallback for conditions the witnesses cannot work out; fewer than
// diff tries keep the ten questions' thirty-odd calls quick on a policy with many masks.
constexpr std::size_t kMaxPoints = std::size_t{1} << 16;

using Typical = std::initializer_list<std::uint64_t>;

struct CallSpec {
  const char* shown;  // as an answer names the call when it runs nowhere
  const char* syscall;
  // The arguments the question counts, in the policy language; empty: any.
  const char* counts;
  std::initializer_list<Typical> typical;  // what programs pass, tried first
};

// A need is met when one of its calls runs at some argument the question counts.
enum class Role : std::uint8_t { required, wanted, extra };

struct NeedSpec {
  const char* what;
  Role role;
  std::initializer_list<CallSpec> calls;
};

struct QuestionSpec {
  const char* key;
  const char* question;
  std::initializer_list<NeedSpec> needs;
};

// Families that carry traffic off the machine or to its host, beside IPv4 and IPv6.
constexpr const char* kOtherNetworkFamilies =
    "arg0 in {AF_PACKET, AF_VSOCK, AF_XDP, AF_BLUETOOTH, AF_CAN, AF_TIPC, AF_RDS, AF_SMC, AF_IB, "
    "AF_MPLS, AF_KCM, AF_QIPCRTR, AF_NFC, AF_PPPOX, AF_LLC, AF_APPLETALK, AF_X25, AF_AX25, AF_IPX}";
// Any of these flags writes: O_TRUNC empties the file even opened O_RDONLY.
constexpr const char* kOpenatWrites = "(arg2 & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0";
constexpr const char* kOpenWrites = "(arg1 & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0";
constexpr const char* kCloneNamespaces =
    "(arg0 & (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | "
    "CLONE_NEWPID | CLONE_NEWNET)) != 0";
constexpr const char* kUnshareNamespaces =
    "(arg0 & (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | "
    "CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWTIME)) != 0";
// The language has no names for bpf's commands.
static_assert(BPF_PROG_LOAD == 5);
constexpr const char* kBpfProgLoad = "arg0 == 5";

// clone3 and openat2 pass their flags in memory, where no condition reads them; the baseline
// answers both ENOSYS, so they are not asked about.
// clang-format off
const QuestionSpec kQuestions[] = {
    {"network_sockets", "open network sockets (AF_INET/AF_INET6, AF_PACKET…)?", {
        {"IPv4", Role::wanted, {{"socket(AF_INET, …)", "socket", "arg0 == AF_INET",
                                 {{AF_INET, SOCK_STREAM}, {AF_INET, SOCK_DGRAM}}}}},
        {"IPv6", Role::wanted, {{"socket(AF_INET6, …)", "socket", "arg0 == AF_INET6",
                                 {{AF_INET6, SOCK_STREAM}, {AF_INET6, SOCK_DGRAM}}}}},
        {"another network family", Role::extra, {
            {"socket(AF_PACKET, AF_VSOCK, …)", "socket", kOtherNetworkFamilies,
             {{AF_PACKET, SOCK_RAW}, {AF_VSOCK, SOCK_STREAM}}}}}}},
    {"unix_sockets", "make Unix sockets?", {
        {"a Unix socket", Role::wanted, {
            {"socket(AF_UNIX, …)", "socket", "arg0 == AF_UNIX", {{AF_UNIX, SOCK_STREAM}}},
            {"socketpair(AF_UNIX, …)", "socketpair", "arg0 == AF_UNIX", {{AF_UNIX, SOCK_STREAM}}}}}}},
    {"processes", "start processes (fork/clone without CLONE_THREAD, execve)?", {
        {"create a process", Role::required, {
            {"clone without CLONE_THREAD", "clone", "(arg0 & CLONE_THREAD) == 0",
             {{kForkFlags}, {SIGCHLD}, {kSpawnFlags}}},
            {"fork()", "fork", "", {}},
            {"vfork()", "vfork", "", {}}}},
        {"run another program", Role::wanted, {{"execve", "execve", "", {}},
                                               {"execveat", "execveat", "", {}}}}}},
    {"threads", "start threads?", {
        {"a thread", Role::wanted, {{"clone with CLONE_THREAD", "clone",
                                     "(arg0 & CLONE_THREAD) != 0", {{kThreadFlags}}}}}}},
    {"write_files", "write files (open for writing, create, remove, rename, truncate, chmod)?", {
        {"open for writing", Role::wanted, {
            {"openat(O_WRONLY/O_RDWR/O_CREAT/O_TRUNC)", "openat", kOpenatWrites,
             {{0, 0, O_WRONLY}, {0, 0, O_RDWR}, {0, 0, O_CREAT | O_WRONLY | O_TRUNC, kMode}}},
            {"open(O_WRONLY/O_RDWR/O_CREAT/O_TRUNC)", "open", kOpenWrites,
             {{0, O_WRONLY}, {0, O_RDWR}, {0, O_CREAT | O_WRONLY | O_TRUNC, kMode}}},
            {"creat", "creat", "", {{0, kMode}}}}},
        {"make names", Role::wanted, {
            {"mkdir", "mkdir", "", {}}, {"mkdirat", "mkdirat", "", {}},
            {"link", "link", "", {}}, {"linkat", "linkat", "", {}},
            {"symlink", "symlink", "", {}}, {"symlinkat", "symlinkat", "", {}}}},
        {"remove", Role::wanted, {{"unlink", "unlink", "", {}}, {"unlinkat", "unlinkat", "", {}},
                                  {"rmdir", "rmdir", "", {}}}},
        {"rename", Role::wanted, {{"rename", "rename", "", {}}, {"renameat", "renameat", "", {}},
                                  {"renameat2", "renameat2", "", {}}}},
        {"change in place", Role::wanted, {
            {"truncate", "truncate", "", {}}, {"ftruncate", "ftruncate", "", {}},
            {"chmod", "chmod", "", {{0, kMode}}}, {"fchmod", "fchmod", "", {{0, kMode}}},
            {"fchmodat", "fchmodat", "", {{0, 0, kMode}}}}}}},
    {"identity", "change its uid/gid or capabilities (setuid, setresuid, capset)?", {
        {"uid", Role::wanted, {{"setuid", "setuid", "", {}}, {"setresuid", "setresuid", "", {}},
                               {"setreuid", "setreuid", "", {}}}},
        {"gid", Role::wanted, {{"setgid", "setgid", "", {}}, {"setresgid", "setresgid", "", {}},
                               {"setregid", "setregid", "", {}}}},
        {"capabilities", Role::wanted, {{"capset", "capset", "", {}}}}}},
    {"other_processes", "trace or read other processes (ptrace, process_vm_readv, pidfd_getfd)?", {
        {"trace", Role::wanted, {{"ptrace(PTRACE_ATTACH)", "ptrace", "arg0 == PTRACE_ATTACH", {}},
                                 {"ptrace(PTRACE_SEIZE)", "ptrace", "arg0 == PTRACE_SEIZE", {}}}},
        {"read or write memory", Role::wanted, {
            {"process_vm_readv", "process_vm_readv", "", {}},
            {"process_vm_writev", "process_vm_writev", "", {}}}},
        {"take or compare its files", Role::wanted, {{"pidfd_getfd", "pidfd_getfd", "", {}},
                                                     {"kcmp", "kcmp", "", {}}}}}},
    {"kernel_code", "load kernel code or filters (bpf, init_module)?", {
        {"bpf", Role::wanted, {{"bpf(BPF_PROG_LOAD)", "bpf", kBpfProgLoad, {}}}},
        {"modules", Role::wanted, {{"init_module", "init_module", "", {}},
                                   {"finit_module", "finit_module", "", {}}}},
        {"kexec", Role::wanted, {{"kexec_load", "kexec_load", "", {}},
                                 {"kexec_file_load", "kexec_file_load", "", {}}}}}},
    {"mounts_namespaces", "mount or change namespaces (mount, unshare, setns, clone with CLONE_NEW*)?", {
        {"mount", Role::wanted, {{"mount", "mount", "", {}}, {"fsopen", "fsopen", "", {}},
                                 {"open_tree", "open_tree", "", {}},
                                 {"move_mount", "move_mount", "", {}}}},
        {"unshare", Role::wanted, {{"unshare(CLONE_NEW*)", "unshare",
                                    kUnshareNamespaces,
                                    {{CLONE_NEWUSER}, {CLONE_NEWNS}}}}},
        {"setns", Role::wanted, {{"setns", "setns", "", {}}}},
        {"clone into new namespaces", Role::wanted, {
            {"clone(CLONE_NEW*)", "clone", kCloneNamespaces, {{CLONE_NEWUSER | SIGCHLD}}}}}}},
    {"clock", "set the clock?", {
        {"the clock", Role::wanted, {{"clock_settime", "clock_settime", "", {}},
                                     {"settimeofday", "settimeofday", "", {}},
                                     {"adjtimex", "adjtimex", "", {}},
                                     {"clock_adjtime", "clock_adjtime", "", {}}}}}},
};
// clang-format on

const Action& decide(const std::vector<const Rule*>& rules, const Action& default_action,
                     const detail::Args& args) {
  std::uint64_t values[6];
  std::copy(args.begin(), args.end(), values);
  return policy::decide(rules, default_action, values);
}

// The question's side of one call, as a policy: it allows exactly what the question counts.
Policy question_policy(const CallSpec& spec) {
  std::string text = std::string("default kill\nallow ") + spec.syscall;
  if (*spec.counts != '\0') text += std::string(" if ") + spec.counts;
  LoadResult loaded = try_parse_policy(text + "\n", "question", ".", Baseline::none);
  if (!loaded.policy)
    throw std::logic_error(std::string("capability question for ") + spec.syscall +
                           " does not parse: " + text);
  return std::move(*loaded.policy);
}

// "socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC)": the arguments up to the last one a condition
// reads, "…" for one none reads; the call's own name when none is read.
std::string call_text(const CallSpec& spec, const detail::Args& args,
                      const std::vector<int>& read) {
  if (read.empty()) return spec.shown;
  const int last = *std::max_element(read.begin(), read.end());
  std::string out = std::string(spec.syscall) + "(";
  for (int i = 0; i <= last; ++i) {
    if (i != 0) out += ", ";
    const bool is_read = std::find(read.begin(), read.end(), i) != read.end();
    out += is_read ? value_text(spec.syscall, i, args[static_cast<std::size_t>(i)]) : "…";
  }
  return out + ")";
}

Probe probe(const Policy& policy, const CallSpec& spec) {
  const std::optional<int> nr = syscall_number(spec.syscall);
  if (!nr) throw std::logic_error(std::string("capability question: no syscall ") + spec.syscall);
  const Policy question = question_policy(spec);
  const std::vector<const Rule*> rules = policy.rules_for(*nr);
  const std::vector<const Rule*> counts = question.rules_for(*nr);
  const Action counted{ActionKind::allow, 0, false};

  std::vector<detail::Args> points;
  for (const Typical& t : spec.typical) {
    detail::Args args{};
    std::copy(t.begin(), t.end(), args.begin());
    points.push_back(args);
  }
  const auto witnesses = detail::witnesses_where(rules, policy.default_action, counts,
                                                 question.default_action, counted);
  for (const detail::Args& w : witnesses.value_or(std::vector<detail::Args>{})) points.push_back(w);
  const detail::ArgPoints boundary = detail::boundary_points(rules, counts, kMaxPoints);
  std::vector<std::size_t> at(boundary.indexes.size(), 0);
  for (;;) {
    detail::Args args{};
    for (std::size_t i = 0; i < at.size(); ++i)
      args[static_cast<std::size_t>(boundary.indexes[i])] = boundary.values[i][at[i]];
    points.push_back(args);
    std::size_t i = 0;
    while (i < at.size() && ++at[i] == boundary.values[i].size()) at[i++] = 0;
    if (i == at.size()) break;
  }

  Probe out{spec.shown, Answer::no, {}, Action{}};
  bool refused = false;
  std::optional<Action> strictest_refusal;
  for (const detail::Args& args : points) {
    if (!(decide(counts, question.default_action, args) == counted)) continue;
    const Action& action = decide(rules, policy.default_action, args);
    if (!lets_run(action)) {
      refused = true;
      if (!strictest_refusal || strictness(action) > strictness(*strictest_refusal))
        strictest_refusal = action;
    } else if (out.at.empty()) {
      out.at = call_text(spec, args, boundary.indexes);
      out.action = action;
    }
  }
  if (out.at.empty()) {
    out.action = strictest_refusal.value_or(policy.default_action);
    return out;
  }
  out.reach = refused ? Answer::partly : Answer::yes;
  return out;
}

Answer answer(const std::vector<Need>& needs) {
  bool any = false, all = true;
  for (const Need& n : needs) {
    if (n.required && !n.met()) return Answer::no;
    any = any || n.met();
    all = all && (n.extra || n.met());
  }
  return !any ? Answer::no : all ? Answer::yes : Answer::partly;
}

}  // namespace

std::vector<QuestionAnswer> answer_questions(const Policy& policy) {
  std::vector<QuestionAnswer> out;
  for (const QuestionSpec& q : kQuestions) {
    QuestionAnswer a{q.key, q.question, Answer::no, {}};
    for (const NeedSpec& n : q.needs) {
      Need need{n.what, n.role == Role::required, n.role == Role::extra, {}};
      for (const CallSpec& call : n.calls) need.alternatives.push_back(probe(policy, call));
      a.needs.push_back(std::move(need));
    }
    a.answer = answer(a.needs);
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace jail::policy
