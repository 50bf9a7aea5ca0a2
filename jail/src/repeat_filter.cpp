#include "repeat_filter.hpp"

#include "log.hpp"

namespace jail {

bool RepeatFilter::first(const std::string& kind, const Kind& fields) {
  if (const auto known = seen_.find(kind); known != seen_.end()) {
    ++known->second.times;
    return false;
  }
  if (seen_.size() >= kKinds) {
    ++others_;
    return false;
  }
  seen_.emplace(kind, Seen{fields, 1});
  return true;
}

void RepeatFilter::log_repeats(std::string_view verb, std::string_view event) const {
  for (const auto& [kind, seen] : seen_) {
    if (seen.times < 2) continue;
    const LogFields fields{.event = event,
                           .syscall = seen.fields.syscall,
                           .rule = seen.fields.rule,
                           .action = seen.fields.action,
                           .count = seen.times - 1};
    const ScopedLogFields scope(fields);
    jail::log().warn("{} {} {} more times", verb, kind, seen.times - 1);
  }
  if (others_ > 0) {
    const LogFields fields{.event = event, .count = others_};
    const ScopedLogFields scope(fields);
    jail::log().warn("{} {} more times in ways not shown ({} kinds are shown at most)", verb,
                     others_, kKinds);
  }
}

}  // namespace jail
