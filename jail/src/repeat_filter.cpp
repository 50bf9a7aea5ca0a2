#include "repeat_filter.hpp"

#include "log.hpp"

namespace jail {

bool RepeatFilter::first(const std::string& kind) {
  if (const auto known = times_.find(kind); known != times_.end()) {
    ++known->second;
    return false;
  }
  if (times_.size() >= kKinds) {
    ++others_;
    return false;
  }
  times_.emplace(kind, 1);
  return true;
}

void RepeatFilter::log_repeats(std::string_view verb) const {
  for (const auto& [kind, times] : times_) {
    if (times > 1) jail::log().warn("{} {} {} more times", verb, kind, times - 1);
  }
  if (others_ > 0) {
    jail::log().warn("{} {} more times in ways not shown ({} kinds are shown at most)", verb,
                     others_, kKinds);
  }
}

}  // namespace jail
