// How the child side reports: one fixed-size record on the report pipe, then _exit. No allocation,
// no stdio, no exceptions — the parent turns the record into a message.
#pragma once

#include <unistd.h>

#include <cerrno>

#include "child/plan.hpp"
#include "child/report.hpp"
#include "step.hpp"

namespace jail::child {

// Exit status of the child side when setup fails; the parent reads the report, not this.
inline constexpr int kSetupFailedStatus = 125;

inline void send_report(int fd, ReportKind kind, Step step, int err, int detail) {
  const Report report{kind, static_cast<std::int32_t>(step), err, detail};
  // A short or failed write leaves the parent with "the jail ended without a report", which it
  // reports as an internal error; there is nothing better to do from here.
  while (::write(fd, &report, sizeof report) < 0 && errno == EINTR) {
  }
}

[[noreturn]] inline void fail(const Plan& plan, Step step, int err, int detail = -1) {
  send_report(plan.report_fd, ReportKind::setup_failed, step, err, detail);
  ::_exit(kSetupFailedStatus);
}

}  // namespace jail::child
