// `jail policy explain --capabilities` output: a few lines per category and per question,
// where the syscall-by-syscall explain runs to hundreds.
#include "policy/capabilities.hpp"

namespace jail::policy {
namespace {

// Lines stop at kWidth: a list of names is counted past it ("+9 more"), a long condition
// (python's ioctl set) is cut, the whole of it is in `jail policy explain FILE SYSCALL` and in
// the JSON; the calls under a question go on as many lines as they need.
constexpr std::size_t kWidth = 100;
constexpr std::string_view kCallsIndent = "          ";

// As many names as fit in a line that already holds `used` characters, then "+N more".
std::string some(const std::vector<std::string>& names, std::size_t used) {
  constexpr std::size_t kMoreRoom = 12;  // ", +123 more"
  std::string out;
  std::size_t i = 0;
  for (; i < names.size(); ++i) {
    const std::size_t room = i + 1 == names.size() ? 0 : kMoreRoom;
    if (i != 0 && used + out.size() + 2 + names[i].size() + room > kWidth) break;
    out += (i == 0 ? "" : ", ") + names[i];
  }
  if (i < names.size()) out += ", +" + std::to_string(names.size() - i) + " more";
  return out;
}

// Cut at a character boundary: the conditions are ASCII, but a file's own text may not be.
std::string cut(const std::string& text, std::size_t width) {
  if (text.size() <= width) return text;
  std::size_t end = width;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) --end;
  return text.substr(0, end) + "…";
}

std::string category_text(const CategoryCapabilities& row) {
  std::size_t refused = 0;
  for (const auto& g : row.refused) refused += g.syscalls.size();
  std::string out = std::string(title(row.category)) + ": " + std::to_string(row.allowed.size()) +
                    " allowed, " + std::to_string(row.conditional.size()) +
                    " only with conditions, " + std::to_string(refused) + " refused\n";
  const std::string allowed = "  allowed      ";
  if (!row.allowed.empty()) out += allowed + some(row.allowed, allowed.size()) + "\n";
  for (const auto& c : row.conditional) {
    // One line when the rules fit, else a rule a line under the first.
    const std::string head = "  only if      " + c.syscall + ": ";
    std::string one_line;
    for (const auto& r : c.rules) one_line += (one_line.empty() ? "" : "; ") + r;
    const std::size_t room = kWidth > head.size() + 20 ? kWidth - head.size() - 1 : 20;
    if (one_line.size() <= room) {
      out += head + one_line + "\n";
      continue;
    }
    for (std::size_t i = 0; i < c.rules.size(); ++i)
      out += (i == 0 ? head : std::string(head.size(), ' ')) + cut(c.rules[i], room) + "\n";
  }
  for (const auto& g : row.refused) {
    const std::string head = "  refused      " + g.how + ": ";
    out += head + some(g.syscalls, head.size()) + "\n";
  }
  return out;
}

// Past this a call found running is named as the question names it (a thread's nine clone flags);
// the JSON has it whole.
constexpr std::size_t kCallWidth = 60;

// "socket(AF_INET, SOCK_STREAM): allow" for a need met, "(some arguments)" when others are
// refused; for one that is not, every call tried and what it got: "mount, fsopen: kill".
std::string need_text(const Need& need) {
  for (const Probe& p : need.alternatives)
    if (p.runs())
      return (p.at.size() <= kCallWidth ? p.at : p.call) + ": " + to_string(p.action) +
             (p.reach == Answer::partly ? " (some arguments)" : "");
  std::string out, calls;
  for (std::size_t i = 0; i < need.alternatives.size(); ++i) {
    const Probe& p = need.alternatives[i];
    calls += (calls.empty() ? "" : ", ") + p.call;
    const bool last = i + 1 == need.alternatives.size();
    if (last || !(need.alternatives[i + 1].action == p.action)) {
      out += (out.empty() ? "" : ", ") + calls + ": " + to_string(p.action);
      calls.clear();
    }
  }
  return out;
}

}  // namespace

std::string capabilities_text(const Capabilities& c) {
  std::string out =
      c.policy + ", by category (a syscall no rule names: " + to_string(c.default_action) + ")\n";
  for (const auto& row : c.categories) out += "\n" + category_text(row);
  out +=
      "\nQuestions (the policy evaluated where its conditions change and at what programs "
      "pass):\n";
  for (const auto& q : c.questions) {
    std::string answer(to_string(q.answer));
    out += "  " + answer + std::string(8 - answer.size(), ' ') + q.question + "\n";
    std::string line(kCallsIndent);
    for (const Need& n : q.needs) {
      const std::string part = need_text(n);
      if (line.size() > kCallsIndent.size() && line.size() + 2 + part.size() > kWidth) {
        out += line + ";\n";
        line = kCallsIndent;
      }
      line += (line.size() == kCallsIndent.size() ? "" : "; ") + part;
    }
    out += line + "\n";
  }
  return out;
}

nlohmann::json capabilities_json(const Capabilities& c) {
  nlohmann::json categories = nlohmann::json::object();
  for (const auto& row : c.categories) {
    nlohmann::json conditional = nlohmann::json::array(), refused = nlohmann::json::array();
    for (const auto& s : row.conditional)
      conditional.push_back({{"syscall", s.syscall}, {"rules", s.rules}});
    for (const auto& g : row.refused) refused.push_back({{"how", g.how}, {"syscalls", g.syscalls}});
    categories[std::string(to_string(row.category))] = {
        {"allowed", row.allowed}, {"conditional", conditional}, {"refused", refused}};
  }
  nlohmann::json questions = nlohmann::json::array();
  for (const auto& q : c.questions) {
    nlohmann::json needs = nlohmann::json::array();
    for (const Need& n : q.needs) {
      nlohmann::json calls = nlohmann::json::array();
      for (const Probe& p : n.alternatives)
        calls.push_back({{"call", p.call},
                         {"runs", to_string(p.reach)},
                         {"at", p.at.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.at)},
                         {"action", to_string(p.action)}});
      needs.push_back({{"what", n.what},
                       {"required", n.required},
                       {"extra", n.extra},
                       {"met", n.met()},
                       {"calls", calls}});
    }
    questions.push_back({{"key", q.key},
                         {"question", q.question},
                         {"answer", to_string(q.answer)},
                         {"needs", needs}});
  }
  return {{"policy", c.policy},
          {"default", to_string(c.default_action)},
          {"categories", categories},
          {"questions", questions}};
}

}  // namespace jail::policy
