// Parent side of --trace-timing: the parent's and the supervisor's marks, merged with the
// child's (which arrive as timing reports) into the Result's list of phases.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "child/report.hpp"
#include "child/timing.hpp"
#include "jail/result.hpp"

namespace jail {

class Timeline {
 public:
  Timeline() = default;
  explicit Timeline(bool enabled) : enabled_(enabled) {}

  [[nodiscard]] bool enabled() const { return enabled_; }
  void mark(child::Phase phase) {
    if (enabled_) marks_.emplace_back(phase, child::monotonic_ns());
  }
  // Every phase seen, in Phase order, as milliseconds since launch() was entered.
  [[nodiscard]] std::vector<PhaseTime> phases(const std::vector<child::Report>& reports) const;

 private:
  bool enabled_ = false;
  std::vector<std::pair<child::Phase, std::int64_t>> marks_;
};

}  // namespace jail
