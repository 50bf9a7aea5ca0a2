// `jail doctor`: what this host supports and what that means for jail.
//
// Every check probes the kernel where a probe is cheap (a forked child that tries the syscall)
// instead of trusting configuration files, because config and reality disagree on real hosts:
// sysctls that are absent, LSMs that veto user namespaces, containers that filter syscalls.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

// Entry point for `jail doctor [--format text|json]`; argv[0] is "doctor".
// Returns 0 when jail can run with full isolation here, 1 when something it needs is missing,
// 2 for bad options.
[[nodiscard]] int run_doctor(int argc, char** argv);

namespace jail::doctor {

enum class Status { ok, limited, missing };

// Whether a check decides the verdict: a required check that is missing means jail cannot run
// with full isolation; an optional one only narrows what jail offers (runsc, benchmarks).
enum class Need { required, optional };

struct Check {
  std::string name;  // stable key, also the JSON member name
  Status status = Status::missing;
  Need need = Need::required;
  std::string finding;  // what the host has, in a few words
  std::string meaning;  // what that means for jail
  nlohmann::ordered_json facts = nlohmann::ordered_json::object();  // the same, for machines
};

[[nodiscard]] const char* status_word(Status status);

// One function per check; each lives in the file named for its concern.
[[nodiscard]] Check check_kernel();           // doctor_namespaces.cpp
[[nodiscard]] Check check_user_namespaces();  // doctor_namespaces.cpp
[[nodiscard]] Check check_namespaces();       // doctor_namespaces.cpp
[[nodiscard]] Check check_cgroups();          // doctor_cgroups.cpp
[[nodiscard]] Check check_seccomp();          // doctor_security.cpp
[[nodiscard]] Check check_landlock();         // doctor_security.cpp
[[nodiscard]] Check check_mount_api();        // doctor_mounts.cpp
[[nodiscard]] Check check_openat2();          // doctor_mounts.cpp
[[nodiscard]] Check check_runsc();            // doctor_tools.cpp
[[nodiscard]] Check check_benchmark_tools();  // doctor_tools.cpp
[[nodiscard]] Check check_kvm();              // doctor_tools.cpp

// --- probes in a forked child (doctor_probe.cpp) ---------------------------------------------
// The child is post-fork code: it gets only plain values, makes raw syscalls and reports the first
// failing step and its errno over a pipe. It dies with doctor (PDEATHSIG) and after a few seconds
// at most (alarm), so a probe never outlives the report; its namespaces and mounts die with it.

struct ProbeFailure {
  int step = 0;  // 0: every step succeeded; otherwise the 1-based index of the failing step
  int error = 0;
};

struct ProbeResult {
  bool ran = false;  // the child reported back (false: it died, see `signal`, or fork failed)
  int signal = 0;    // the signal that killed the child, when it did not report
  int fork_error = 0;
  ProbeFailure failure;
  [[nodiscard]] bool succeeded() const { return ran && failure.step == 0; }
};

// Plain values the child needs; nothing in here allocates or points into the parent's heap.
struct ProbeArgs {
  int unshare_flags = 0;   // for probe_unshare
  bool as_nobody = false;  // drop to uid/gid 65534 first, to learn the non-root answer
};

using ProbeFn = ProbeFailure (*)(const ProbeArgs&);

[[nodiscard]] ProbeResult run_probe(ProbeFn fn, const ProbeArgs& args);

// Child-side probe bodies.
ProbeFailure probe_unshare(const ProbeArgs& args);           // steps: drop (1-3), unshare (4)
ProbeFailure probe_seccomp_listener(const ProbeArgs& args);  // steps: no_new_privs, seccomp
ProbeFailure probe_mount_api(const ProbeArgs& args);         // steps: see kMountApiSteps

// "EPERM: Operation not permitted" style, or "killed by SIGSYS" when the child died.
[[nodiscard]] std::string describe_failure(const ProbeResult& result,
                                           const std::vector<std::string>& step_names);
[[nodiscard]] std::string errno_name(int error);

// Small parent-side helpers shared by the checks (doctor.cpp).
[[nodiscard]] std::string read_text_file(const std::string& path, bool* ok = nullptr);
[[nodiscard]] std::vector<std::string> split_words(const std::string& text);
[[nodiscard]] std::string join(const std::vector<std::string>& words, const std::string& sep);

}  // namespace jail::doctor
