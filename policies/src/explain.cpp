// Explain: for each syscall, the rules tried in order and what decides when none matches —
// the answer to "what happens if the program calls X?" without reading every include.
#include <cstdio>
#include <stdexcept>

#include "policy/suggest.hpp"
#include "policy/syscalls.hpp"
#include "policy/tools.hpp"

namespace jail::policy {
namespace {

std::string where(const SourceLocation& w) {
  return w.file + ":" + std::to_string(w.line);
}

std::vector<int> selected(const Policy& p, const std::vector<std::string>& names) {
  if (names.empty()) return p.syscalls();
  std::vector<int> out;
  for (const auto& n : names) {
    auto nr = syscall_number(n);
    if (!nr || *nr < 0)
      throw std::invalid_argument("unknown syscall '" + n + "'" +
                                  detail::did_you_mean(n, all_syscall_names()));
    out.push_back(*nr);
  }
  return out;
}

}  // namespace

nlohmann::json explain_json(const Policy& policy, const std::vector<std::string>& syscalls) {
  nlohmann::json out;
  out["policy"] = policy.name;
  out["within"] = policy.within.empty() ? nlohmann::json(nullptr) : nlohmann::json(policy.within);
  out["default"] = {{"action", to_string(policy.default_action)},
                    {"file", policy.default_where.file},
                    {"line", policy.default_where.line}};
  nlohmann::json list = nlohmann::json::array();
  for (int nr : selected(policy, syscalls)) {
    nlohmann::json rules = nlohmann::json::array();
    bool unconditional = false;
    for (const Rule* r : policy.rules_for(nr)) {
      rules.push_back({{"action", to_string(r->action)},
                       {"condition", r->condition ? nlohmann::json(r->condition_text) : nullptr},
                       {"file", r->where.file},
                       {"line", r->where.line},
                       {"reachable", !unconditional}});
      unconditional = unconditional || !r->condition;
    }
    list.push_back(
        {{"syscall", syscall_name(nr)},
         {"nr", nr},
         {"rules", rules},
         {"otherwise", unconditional ? nlohmann::json(nullptr)
                                     : nlohmann::json(to_string(policy.default_action))}});
  }
  out["syscalls"] = list;
  return out;
}

std::string explain_text(const Policy& policy, const std::vector<std::string>& syscalls) {
  std::string out;
  if (!policy.within.empty()) {
    // The rules below are the pairs `within` made; a reader should know why they look doubled.
    out += "within " + policy.within + " (" + where(policy.within_where) +
           "): each rule below pairs one of this policy's with one of " + policy.within +
           "'s; the stricter action decides\n";
  }
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-22s %4s  %-14s %-44s %s\n", "SYSCALL", "NR", "ACTION",
                "CONDITION", "DECIDED AT");
  out += buf;
  for (int nr : selected(policy, syscalls)) {
    std::string name = syscall_name(nr);
    bool unconditional = false;
    for (const Rule* r : policy.rules_for(nr)) {
      std::string cond = r->condition ? "if " + r->condition_text : "always";
      if (unconditional) cond += "  (never reached)";
      std::snprintf(buf, sizeof buf, "%-22s %4s  %-14s %-44s %s\n", name.c_str(),
                    name.empty() ? "" : std::to_string(nr).c_str(), to_string(r->action).c_str(),
                    cond.c_str(), where(r->where).c_str());
      out += buf;
      name.clear();
      unconditional = unconditional || !r->condition;
    }
    if (!unconditional) {
      std::snprintf(buf, sizeof buf, "%-22s %4s  %-14s %-44s %s\n", name.c_str(),
                    name.empty() ? "" : std::to_string(nr).c_str(),
                    to_string(policy.default_action).c_str(), "otherwise (default)",
                    where(policy.default_where).c_str());
      out += buf;
    }
  }
  return out;
}

}  // namespace jail::policy
