// `jail policy explain --capabilities` output: a few lines per category and one per question,
// where the syscall-by-syscall explain runs to hundreds.
#include "policy/capabilities.hpp"

namespace jail::policy {
namespace {

// Names shown in a list before the rest are counted; a long condition (python's ioctl set) is
// cut here, the whole of it is in `jail policy explain FILE SYSCALL` and in the JSON.
constexpr std::size_t kNamesShown = 6;
constexpr std::size_t kRulesWidth = 110;

std::string some(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kNamesShown; ++i)
    out += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > kNamesShown)
    out += ", +" + std::to_string(names.size() - kNamesShown) + " more";
  return out;
}

// Cut at a character boundary: the conditions are ASCII, but a file's own text may not be.
std::string cut(const std::string& text) {
  if (text.size() <= kRulesWidth) return text;
  std::size_t end = kRulesWidth;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) --end;
  return text.substr(0, end) + "…";
}

std::string category_text(const CategoryCapabilities& row) {
  std::size_t refused = 0;
  for (const auto& g : row.refused) refused += g.syscalls.size();
  std::string out = std::string(title(row.category)) + ": " + std::to_string(row.allowed.size()) +
                    " allowed, " + std::to_string(row.conditional.size()) +
                    " only with conditions, " + std::to_string(refused) + " refused\n";
  if (!row.allowed.empty()) out += "  allowed      " + some(row.allowed) + "\n";
  for (const auto& c : row.conditional)
    out += "  only if      " + c.syscall + ": " + cut(c.rules) + "\n";
  for (const auto& g : row.refused)
    out += "  refused      " + g.how + ": " + some(g.syscalls) + "\n";
  return out;
}

// "socket(AF_INET, SOCK_STREAM): allow" for a need met; for one that is not, every call tried
// and what it got: "mount, fsopen: kill".
std::string need_text(const Need& need) {
  for (const Probe& p : need.alternatives)
    if (p.runs()) return p.call + ": " + to_string(p.action);
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
  std::string out = c.policy + ": what the tool may do, by category (otherwise " +
                    to_string(c.default_action) + "; each rule: jail policy explain " + c.policy +
                    ")\n";
  for (const auto& row : c.categories) out += "\n" + category_text(row);
  out += "\nQuestions (the policy evaluated at the arguments programs pass):\n";
  for (const auto& q : c.questions) {
    std::string answer(to_string(q.answer));
    out += "  " + answer + std::string(8 - answer.size(), ' ') + q.question + "\n";
    std::string calls;
    for (const Need& n : q.needs) calls += (calls.empty() ? "" : "; ") + need_text(n);
    out += "          " + calls + "\n";
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
        calls.push_back({{"call", p.call}, {"action", to_string(p.action)}});
      needs.push_back(
          {{"what", n.what}, {"required", n.required}, {"met", n.met()}, {"calls", calls}});
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
