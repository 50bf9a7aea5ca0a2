// `jail policy explain --capabilities`: what a policy lets a tool do, in the categories a
// reviewer asks about, and yes/no answers to the questions a review turns on ("can it open
// network sockets?"), worked out from the policy's own conditions (see Probe).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "policy/categories.hpp"
#include "policy/policy.hpp"

namespace jail::policy {

// A syscall whose decision depends on its arguments, and its deciding rules in order, as
// {"errno EPERM if (arg3 & (S_ISUID | S_ISGID)) != 0", "otherwise allow"}.
struct ConditionalSyscall {
  std::string syscall;
  std::vector<std::string> rules;
};

// The syscalls refused alike, with how: "errno EPERM", "kill", "kill or errno EPERM".
struct RefusedSyscalls {
  std::string how;
  std::vector<std::string> syscalls;
};

struct CategoryCapabilities {
  Category category = Category::system;
  std::vector<std::string> allowed;  // runs (allow or log) whatever its arguments
  std::vector<ConditionalSyscall> conditional;
  std::vector<RefusedSyscalls> refused;  // refused whatever its arguments, grouped by how
};

enum class Answer : std::uint8_t { yes, partly, no };
[[nodiscard]] std::string_view to_string(Answer answer);

// One call a question asks about ("socket(AF_INET, …)": socket with any type and protocol)
// and what the policy decides at the arguments the question counts: at a point in each region
// the policy's and the question's conditions make, at their boundaries, and at what programs pass.
struct Probe {
  std::string call;
  Answer reach = Answer::no;  // runs at every point tried, at some, at none
  // Where it runs, the first call tried that does ("socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC)")
  // and what it gets there; where it runs nowhere, the strictest refusal met.
  std::string at;
  Action action;
  [[nodiscard]] bool runs() const;
};

// What the question needs, each met when one of its calls runs at some argument. A required need
// unmet makes the answer no (execve alone starts no process); otherwise the answer is yes when
// every need but the extra ones is met, no when none is, partly between. An extra need only keeps
// the answer off no: a policy that lets AF_PACKET sockets run opens network sockets, one that
// refuses them may still open every IPv4 and IPv6 one.
struct Need {
  std::string what;  // "create a process"
  bool required = false;
  bool extra = false;
  std::vector<Probe> alternatives;
  [[nodiscard]] bool met() const;
};

struct QuestionAnswer {
  std::string key;       // "network_sockets", for JSON and tests
  std::string question;  // "open network sockets (AF_INET/AF_INET6)?"
  Answer answer = Answer::no;
  std::vector<Need> needs;
};

struct Capabilities {
  std::string policy;
  Action default_action;
  std::vector<CategoryCapabilities> categories;  // kCategories order
  std::vector<QuestionAnswer> questions;
};

[[nodiscard]] Capabilities capabilities(const Policy& policy);
// The questions alone (capabilities() includes them).
[[nodiscard]] std::vector<QuestionAnswer> answer_questions(const Policy& policy);

// The categories, a few lines each, then the questions with the calls that decided them.
[[nodiscard]] std::string capabilities_text(const Capabilities& c);
// {"policy", "default", "categories": {"network": {"allowed": [...], "conditional": [{"syscall",
// "rules": [...]}], "refused": [{"how", "syscalls"}]}, …}, "questions": [{"key", "question",
// "answer", "needs": [{"what", "required", "extra", "met", "calls": [{"call", "runs", "at",
// "action"}]}]}]}; see LANGUAGE.md.
[[nodiscard]] nlohmann::json capabilities_json(const Capabilities& c);

}  // namespace jail::policy
