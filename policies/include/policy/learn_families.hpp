// Families of syscalls `jail policy learn` allows as a whole once a run used one of their
// triggering members: a policy learned on one input then passes the next ordinary one (a thread
// pool that grew, a lock sqlite took, `ls -l` after `ls`) instead of failing on a call it never
// sampled. A family holds only calls that reach nothing beyond what the jail already lets the
// tool touch; networks, IPC, privileges and kernel interfaces are never in one.
// docs/policies.md lists them; `jail policy learn --strict` keeps exact samples instead.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace jail::policy {

struct FamilyMember {
  std::string_view syscall;
  // Values of the syscall's learned condition argument (learned_condition_argument) that belong
  // to the family, by name; empty: every call of the syscall.
  std::vector<std::string_view> values = {};
  // Or a flag of that argument that is set (clone's CLONE_THREAD: a thread) or clear (a process).
  std::string_view flag = {};
  bool flag_set = true;
  // Whether the run using it brings the family in; members every program calls at start
  // (set_robust_list, rseq) would bring in threads for every tool.
  bool triggers = true;
};

struct LearnFamily {
  std::string_view name;
  std::string_view why;  // written above its rules: what it is, and why it reaches nothing more
  std::vector<FamilyMember> members;
  // Brought in by every run: what any program may ask about itself (its ids, its pid, whether
  // its output is a terminal). A tool asks these on some inputs and not others: `git init`
  // never asks for its uid, `git status` refuses a repository it cannot see it owns.
  bool always = false;
};

[[nodiscard]] const std::vector<LearnFamily>& learn_families();

// Whether `member` covers a call of its syscall whose condition argument is `value`.
[[nodiscard]] bool covers(const FamilyMember& member, std::uint64_t value);

}  // namespace jail::policy
