// The summary of a diff: its syscall changes counted per category, with the dangerous syscalls
// a change widens named, since those are what a reviewer must not miss among the counts.
#include <algorithm>
#include <limits>

#include "policy/diff_summary.hpp"
#include "policy/tools.hpp"

namespace jail::policy {
namespace {

// Past this many names a line would wrap; the rest are counted ("+3 more"). A dangerous call
// AFTER lets run is always named; one still refused (kill → errno) is named up to the second
// limit: a learned policy's default turns dozens of python's kills into errno EPERM.
constexpr std::size_t kNamesShown = 3;
constexpr std::size_t kRefusedShown = 3;

// The first `shown` names, then "+N more" for the rest.
std::string joined(const std::vector<std::string>& names,
                   std::size_t shown = std::numeric_limits<std::size_t>::max()) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i)
    out += (out.empty() ? "" : ", ") + names[i];
  if (names.size() > shown)
    out += (out.empty() ? "+" : ", +") + std::to_string(names.size() - shown) + " more";
  return out;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// "socket, connect" or "dangerous: ptrace; also socket, +2 more": every dangerous name (those
// still refused, only more mildly, apart), and the others while there is room.
std::string named(const std::vector<std::string>& names, const CategoryChanges& row) {
  std::vector<std::string> run, refused, others;
  for (const auto& n : names) {
    if (!contains(row.dangerous_wider, n))
      others.push_back(n);
    else
      (contains(row.dangerous_run, n) ? run : refused).push_back(n);
  }
  std::vector<std::string> parts;
  if (!run.empty()) parts.push_back("dangerous: " + joined(run));
  if (!refused.empty())
    parts.push_back("dangerous, still refused: " + joined(refused, kRefusedShown));
  const std::size_t listed = run.size() + std::min(refused.size(), kRefusedShown);
  const std::size_t shown = listed >= kNamesShown ? 0 : kNamesShown - listed;
  if (!others.empty())
    parts.push_back((parts.empty() || shown == 0 ? "" : "also ") + joined(others, shown));
  std::string text;
  for (const auto& p : parts) text += (text.empty() ? "" : "; ") + p;
  return text;
}

std::string count_line(const CategoryChanges& c) {
  const bool none = c.wider.empty() && c.narrower.empty() && c.mixed.empty() && c.changed.empty() &&
                    c.restated.empty();
  if (none) return "no change";
  std::string out = std::to_string(c.wider.size()) + " wider";
  if (!c.wider.empty()) out += " (" + named(c.wider, c) + ")";
  out += ", " + std::to_string(c.narrower.size()) + " narrower";
  if (!c.mixed.empty())
    out += ", " + std::to_string(c.mixed.size()) + " mixed (" + named(c.mixed, c) + ")";
  if (!c.changed.empty()) out += ", " + std::to_string(c.changed.size()) + " changed";
  if (!c.restated.empty()) out += ", " + std::to_string(c.restated.size()) + " restated";
  return out;
}

}  // namespace

std::vector<CategoryChanges> by_category(const PolicyDiff& d) {
  std::vector<CategoryChanges> out;
  for (Category c : kCategories) out.push_back(CategoryChanges{c, {}, {}, {}, {}, {}, {}, {}});
  for (const SyscallChange& s : d.syscalls) {
    // A name no table knows ("syscall_<nr>") is still counted, under system.
    const Category category = category_of(s.syscall).value_or(Category::system);
    CategoryChanges& row = out[static_cast<std::size_t>(
        std::find(kCategories.begin(), kCategories.end(), category) - kCategories.begin())];
    switch (s.change) {
      case Change::wider:
        row.wider.push_back(s.syscall);
        break;
      case Change::narrower:
        row.narrower.push_back(s.syscall);
        break;
      case Change::mixed:
        row.mixed.push_back(s.syscall);
        break;
      case Change::changed:
        row.changed.push_back(s.syscall);
        break;
      case Change::restated:
        row.restated.push_back(s.syscall);
        break;
    }
    if (s.widened && is_dangerous_syscall(s.syscall)) {
      row.dangerous_wider.push_back(s.syscall);
      if (s.runs_now) row.dangerous_run.push_back(s.syscall);
    }
  }
  return out;
}

std::string diff_summary_text(const PolicyDiff& d) {
  std::string out = d.before_name + " → " + d.after_name +
                    ", by category (without --summary: syscall by syscall)\n";
  const std::vector<CategoryChanges> rows = by_category(d);
  std::size_t width = 0;
  for (const auto& row : rows) width = std::max(width, title(row.category).size());
  for (const auto& row : rows) {
    std::string name(title(row.category));
    out += name + std::string(width + 2 - name.size(), ' ') + count_line(row) + "\n";
  }
  out += diff_default_text(d);
  return out + "\n" + diff_verdict_text(d);
}

nlohmann::json diff_summary_json(const PolicyDiff& d) {
  nlohmann::json categories = nlohmann::json::object();
  for (const CategoryChanges& row : by_category(d)) {
    categories[std::string(to_string(row.category))] = {{"wider", row.wider.size()},
                                                        {"narrower", row.narrower.size()},
                                                        {"mixed", row.mixed.size()},
                                                        {"changed", row.changed.size()},
                                                        {"restated", row.restated.size()},
                                                        {"dangerous_wider", row.dangerous_wider},
                                                        {"dangerous_run", row.dangerous_run},
                                                        {"syscalls",
                                                         {{"wider", row.wider},
                                                          {"narrower", row.narrower},
                                                          {"mixed", row.mixed},
                                                          {"changed", row.changed},
                                                          {"restated", row.restated}}}};
  }
  return {
      {"before", d.before_name},  {"after", d.after_name},           {"wider", d.wider()},
      {"narrower", d.narrower()}, {"default", diff_default_json(d)}, {"categories", categories}};
}

}  // namespace jail::policy
