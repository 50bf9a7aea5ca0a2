// `jail policy diff` output: a table for reviewers and a JSON document for CI.
#include <algorithm>
#include <cstdio>

#include "policy/diff.hpp"

namespace jail::policy {
namespace {

// Long conditions (python's ioctl list) would push the AFTER column off any screen; past this
// width a BEFORE line gets a line of its own.
constexpr std::size_t kMaxBeforeWidth = 52;

std::string rule_text(const RuleLine& r) {
  if (!r.where) return "otherwise " + r.action + "  (default)";
  std::string out = r.action;
  if (r.condition) out += " if " + *r.condition;
  return out + "  (" + r.where->file + ":" + std::to_string(r.where->line) + ")";
}

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string args_text(const Example& e) {
  if (e.args.empty()) return "any arguments";
  std::string out;
  for (const auto& [index, value] : e.args) {
    if (!out.empty()) out += ", ";
    out += "arg" + std::to_string(index) + "=" + hex(value);
  }
  return out;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// Display width: the arrows and other UTF-8 in conditions count once per character.
std::size_t width_of(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char ch) { return (ch & 0xc0) != 0x80; }));
}

std::string padded(const std::string& s, std::size_t width) {
  std::size_t w = width_of(s);
  return w < width ? s + std::string(width - w, ' ') : s;
}

nlohmann::json rule_json(const RuleLine& r) {
  nlohmann::json j{{"action", r.action},
                   {"condition", r.condition ? nlohmann::json(*r.condition) : nullptr},
                   {"default", !r.where.has_value()}};
  j["file"] = r.where ? nlohmann::json(r.where->file) : nullptr;
  j["line"] = r.where ? nlohmann::json(r.where->line) : nullptr;
  return j;
}

nlohmann::json example_json(const std::optional<Example>& e) {
  if (!e) return nullptr;
  nlohmann::json args = nlohmann::json::object();
  for (const auto& [index, value] : e->args) args["arg" + std::to_string(index)] = value;
  return {{"args", args}, {"before", to_string(e->before)}, {"after", to_string(e->after)}};
}

std::string_view default_change(const PolicyDiff& d) {
  int a = strictness(*d.default_before), b = strictness(*d.default_after);
  return b < a ? "wider" : b > a ? "narrower" : "changed";
}

}  // namespace

std::string diff_text(const PolicyDiff& d) {
  std::string out = diff_default_text(d);
  if (!d.syscalls.empty()) {
    std::size_t name_w = 7, before_w = 6 + d.before_name.size() + 3;
    for (const auto& c : d.syscalls) {
      name_w = std::max(name_w, c.syscall.size());
      for (const auto& r : c.before)
        before_w = std::max(before_w, std::min(kMaxBeforeWidth, width_of(rule_text(r))));
    }
    const std::size_t change_w = 9, after_col = name_w + 2 + change_w + 1 + before_w + 2;
    if (!out.empty()) out += "\n";
    out += pad("SYSCALL", name_w + 2) + pad("CHANGE", change_w + 1) +
           padded("BEFORE (" + d.before_name + ")", before_w + 2) + "AFTER (" + d.after_name +
           ")\n";
    for (const auto& c : d.syscalls) {
      std::size_t rows = std::max(c.before.size(), c.after.size());
      for (std::size_t i = 0; i < rows; ++i) {
        std::string line = i == 0 ? pad(c.syscall, name_w + 2) +
                                        pad(std::string(to_string(c.change)), change_w + 1)
                                  : std::string(name_w + 2 + change_w + 1, ' ');
        std::string before = i < c.before.size() ? rule_text(c.before[i]) : "";
        if (i < c.after.size()) {
          if (width_of(before) > before_w)
            line += before + "\n" + std::string(after_col, ' ');
          else
            line += padded(before, before_w + 2);
          line += rule_text(c.after[i]);
        } else {
          line += before;
        }
        out += line + "\n";
      }
      auto example = [&](const std::optional<Example>& e, std::string_view what) {
        if (!e) return;
        out += std::string(name_w + 2, ' ') + std::string(what) + " at " + args_text(*e) + ": " +
               to_string(e->before) + " → " + to_string(e->after) + "\n";
      };
      example(c.widened, "wider");
      // When the first wider point is not where the call starts to run (kill → errno there).
      if (c.runs_now && c.widened && c.runs_now->args != c.widened->args)
        example(c.runs_now, "runs");
      example(c.narrowed, "narrower");
      example(c.other, "changed");
    }
  }
  if (d.empty()) return out;
  return out + "\n" + diff_verdict_text(d);
}

std::string diff_default_text(const PolicyDiff& d) {
  if (!d.default_before) return "";
  return "default: " + to_string(*d.default_before) + " → " + to_string(*d.default_after) + "  (" +
         std::string(default_change(d)) + "; decides every syscall neither names)\n";
}

std::string diff_verdict_text(const PolicyDiff& d) {
  std::size_t wider = 0, narrower = 0;
  for (const auto& c : d.syscalls) {
    wider += c.widened ? 1 : 0;
    narrower += c.narrowed ? 1 : 0;
  }
  return d.after_name + (d.wider() ? " is WIDER than " : " is not wider than ") + d.before_name +
         ": " + std::to_string(wider) + " syscall(s) wider, " + std::to_string(narrower) +
         " narrower" + (d.default_before ? ", default " + std::string(default_change(d)) : "") +
         "\n";
}

nlohmann::json diff_default_json(const PolicyDiff& d) {
  if (!d.default_before) return nullptr;
  return {{"before", to_string(*d.default_before)},
          {"after", to_string(*d.default_after)},
          {"change", default_change(d)}};
}

nlohmann::json diff_json(const PolicyDiff& d) {
  nlohmann::json j{{"before", d.before_name},
                   {"after", d.after_name},
                   {"wider", d.wider()},
                   {"narrower", d.narrower()}};
  j["default"] = diff_default_json(d);
  j["syscalls"] = nlohmann::json::array();
  for (const auto& c : d.syscalls) {
    nlohmann::json before = nlohmann::json::array(), after = nlohmann::json::array();
    for (const auto& r : c.before) before.push_back(rule_json(r));
    for (const auto& r : c.after) after.push_back(rule_json(r));
    j["syscalls"].push_back({{"syscall", c.syscall},
                             {"nr", c.nr},
                             {"change", to_string(c.change)},
                             {"before", before},
                             {"after", after},
                             {"wider_at", example_json(c.widened)},
                             {"narrower_at", example_json(c.narrowed)},
                             {"changed_at", example_json(c.other)},
                             {"runs_at", example_json(c.runs_now)}});
  }
  return j;
}

}  // namespace jail::policy
