// The questions a review turns on, each answered by evaluating the policy at the argument
// values a program really passes: glibc's clone flags for fork and for a thread, open flags,
// socket families. Pointer arguments are 0: no policy can compare what they point to.
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/bpf.h>
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/socket.h>

#include <csignal>
#include <ctime>
#include <initializer_list>

#include "policy/capabilities.hpp"
#include "policy/evaluate.hpp"
#include "policy/syscalls.hpp"

namespace jail::policy {
namespace {

// What glibc passes to clone for fork() and for pthread_create().
constexpr std::uint64_t kForkFlags = CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD;
constexpr std::uint64_t kThreadFlags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
                                       CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS |
                                       CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
constexpr std::uint64_t kMode = 0644;
constexpr std::uint64_t kAtCwd = static_cast<std::uint32_t>(AT_FDCWD);

struct Call {
  const char* shown;  // as the answer names it
  const char* syscall;
  std::initializer_list<std::uint64_t> args;
};

struct NeedSpec {
  const char* what;
  bool required;
  std::initializer_list<Call> alternatives;
};

struct QuestionSpec {
  const char* key;
  const char* question;
  std::initializer_list<NeedSpec> needs;
};

// clang-format off
const QuestionSpec kQuestions[] = {
    {"network_sockets", "open network sockets (AF_INET/AF_INET6)?", {
        {"IPv4", false, {{"socket(AF_INET, SOCK_STREAM)", "socket", {AF_INET, SOCK_STREAM}},
                         {"socket(AF_INET, SOCK_DGRAM)", "socket", {AF_INET, SOCK_DGRAM}}}},
        {"IPv6", false, {{"socket(AF_INET6, SOCK_STREAM)", "socket", {AF_INET6, SOCK_STREAM}},
                         {"socket(AF_INET6, SOCK_DGRAM)", "socket", {AF_INET6, SOCK_DGRAM}}}}}},
    {"unix_sockets", "make Unix sockets?", {
        {"a Unix socket", false, {{"socket(AF_UNIX, SOCK_STREAM)", "socket", {AF_UNIX, SOCK_STREAM}},
                                  {"socketpair(AF_UNIX, SOCK_STREAM)", "socketpair",
                                   {AF_UNIX, SOCK_STREAM}}}}}},
    {"processes", "start processes (fork/clone without CLONE_THREAD, execve)?", {
        {"create a process", true, {{"clone(SIGCHLD, as fork)", "clone", {kForkFlags}},
                                    {"fork()", "fork", {}},
                                    {"vfork()", "vfork", {}}}},
        {"run another program", false, {{"execve", "execve", {}},
                                        {"execveat", "execveat", {}}}}}},
    {"threads", "start threads?", {
        {"a thread", false, {{"clone(CLONE_THREAD…, as pthread_create)", "clone", {kThreadFlags}}}}}},
    {"write_files", "write files (openat with O_WRONLY/O_RDWR/O_CREAT, unlink, rename)?", {
        {"open for writing", false, {{"openat(O_WRONLY)", "openat", {kAtCwd, 0, O_WRONLY}},
                                     {"openat(O_RDWR)", "openat", {kAtCwd, 0, O_RDWR}},
                                     {"open(O_WRONLY)", "open", {0, O_WRONLY}}}},
        {"create", false, {{"openat(O_CREAT|O_WRONLY, 0644)", "openat",
                            {kAtCwd, 0, O_CREAT | O_WRONLY, kMode}},
                           {"open(O_CREAT|O_WRONLY, 0644)", "open", {0, O_CREAT | O_WRONLY, kMode}},
                           {"creat(0644)", "creat", {0, kMode}}}},
        {"remove", false, {{"unlink", "unlink", {}}, {"unlinkat", "unlinkat", {kAtCwd}}}},
        {"rename", false, {{"rename", "rename", {}}, {"renameat", "renameat", {kAtCwd}},
                           {"renameat2", "renameat2", {kAtCwd, 0, kAtCwd}}}}}},
    {"identity", "change its uid/gid or capabilities (setuid, setresuid, capset)?", {
        {"uid", false, {{"setuid(0)", "setuid", {0}}, {"setresuid(0, 0, 0)", "setresuid", {0, 0, 0}},
                        {"setreuid(0, 0)", "setreuid", {0, 0}}}},
        {"gid", false, {{"setgid(0)", "setgid", {0}}, {"setresgid(0, 0, 0)", "setresgid", {0, 0, 0}},
                        {"setregid(0, 0)", "setregid", {0, 0}}}},
        {"capabilities", false, {{"capset", "capset", {}}}}}},
    {"other_processes", "trace or read other processes (ptrace, process_vm_readv)?", {
        {"trace", false, {{"ptrace(PTRACE_ATTACH)", "ptrace", {PTRACE_ATTACH, 1}},
                          {"ptrace(PTRACE_SEIZE)", "ptrace", {PTRACE_SEIZE, 1}}}},
        {"read or write memory", false, {{"process_vm_readv", "process_vm_readv", {1}},
                                         {"process_vm_writev", "process_vm_writev", {1}}}}}},
    {"kernel_code", "load kernel code or filters (bpf, init_module)?", {
        {"bpf", false, {{"bpf(BPF_PROG_LOAD)", "bpf", {BPF_PROG_LOAD}}}},
        {"modules", false, {{"init_module", "init_module", {}},
                            {"finit_module", "finit_module", {}}}},
        {"kexec", false, {{"kexec_load", "kexec_load", {}},
                          {"kexec_file_load", "kexec_file_load", {}}}}}},
    {"mounts_namespaces", "mount or change namespaces (mount, unshare, setns, clone with CLONE_NEW*)?", {
        {"mount", false, {{"mount", "mount", {}}, {"fsopen", "fsopen", {}},
                          {"open_tree", "open_tree", {}}, {"move_mount", "move_mount", {}}}},
        {"unshare", false, {{"unshare(CLONE_NEWUSER)", "unshare", {CLONE_NEWUSER}},
                            {"unshare(CLONE_NEWNS)", "unshare", {CLONE_NEWNS}}}},
        {"setns", false, {{"setns", "setns", {}}}},
        {"clone into new namespaces", false, {
            {"clone(CLONE_NEWUSER|SIGCHLD)", "clone", {CLONE_NEWUSER | SIGCHLD}}}}}},
    {"clock", "set the clock?", {
        {"the clock", false, {{"clock_settime(CLOCK_REALTIME)", "clock_settime", {CLOCK_REALTIME}},
                              {"settimeofday", "settimeofday", {}},
                              {"adjtimex", "adjtimex", {}},
                              {"clock_adjtime(CLOCK_REALTIME)", "clock_adjtime",
                               {CLOCK_REALTIME}}}}}},
};
// clang-format on

Action decide(const Policy& policy, const Call& call) {
  struct seccomp_data data {};
  data.arch = AUDIT_ARCH_X86_64;
  data.nr = syscall_number(call.syscall).value_or(-1);
  std::size_t i = 0;
  for (std::uint64_t value : call.args) data.args[i++] = value;
  return evaluate(policy, data).action;
}

Answer answer(const std::vector<Need>& needs) {
  std::size_t met = 0;
  for (const Need& n : needs) {
    if (n.required && !n.met()) return Answer::no;
    met += n.met() ? 1 : 0;
  }
  return met == needs.size() ? Answer::yes : met == 0 ? Answer::no : Answer::partly;
}

}  // namespace

std::vector<QuestionAnswer> answer_questions(const Policy& policy) {
  std::vector<QuestionAnswer> out;
  for (const QuestionSpec& q : kQuestions) {
    QuestionAnswer a{q.key, q.question, Answer::no, {}};
    for (const NeedSpec& n : q.needs) {
      Need need{n.what, n.required, {}};
      for (const Call& call : n.alternatives)
        need.alternatives.push_back(Probe{call.shown, decide(policy, call)});
      a.needs.push_back(std::move(need));
    }
    a.answer = answer(a.needs);
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace jail::policy
