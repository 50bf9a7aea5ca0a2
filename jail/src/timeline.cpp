#include "timeline.hpp"

#include <algorithm>

namespace jail {

std::vector<PhaseTime> Timeline::phases(const std::vector<child::Report>& reports) const {
  if (!enabled_) return {};
  auto marks = marks_;
  for (const child::Report& report : reports) {
    if (report.kind != child::ReportKind::timing) continue;
    if (report.step < 0 || report.step >= static_cast<std::int32_t>(child::Phase::count)) continue;
    marks.emplace_back(static_cast<child::Phase>(report.step), report.time_ns);
  }
  // Ordered by phase, not by time: the phases are causally ordered, so a time that goes back
  // shows a clock or ordering problem instead of being hidden by the sort.
  std::stable_sort(marks.begin(), marks.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<PhaseTime> phases;
  const std::int64_t origin = marks.empty() ? 0 : marks.front().second;
  for (const auto& [phase, ns] : marks) {
    phases.push_back(
        {child::kPhaseNames[static_cast<int>(phase)], static_cast<double>(ns - origin) / 1e6});
  }
  return phases;
}

}  // namespace jail
