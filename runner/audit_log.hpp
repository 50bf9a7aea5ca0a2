// --audit-log FILE: one JSON line per run, appended atomically, so a security team has a record
// of what ran, under what, and how it ended.
#pragma once

#include <string>

#include "jail/result.hpp"
#include "jail/spec.hpp"

namespace jail::runner {

// The layout of a record, in its "schema" field (docs/usage.md, "The audit log"),
// raised as kStatusSchema is.
inline constexpr int kAuditSchema = 1;

// The line itself (for tests and for callers with their own sink).
[[nodiscard]] std::string audit_record(const Spec& spec, const Result& result);

// Appends the record to the log jail opened (O_APPEND) before the run, with one write under an
// exclusive lock: concurrent runs never tear or lose a line. `path` names it in messages.
// Returns false (and logs why) when it cannot be written.
bool append_audit_record(int fd, const std::string& path, const Spec& spec, const Result& result);

}  // namespace jail::runner
