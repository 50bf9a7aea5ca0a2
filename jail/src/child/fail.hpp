// How the child side reports: one fixed-size record on the report pipe, then _exit. No allocation,
// no stdio, no exceptions — the parent turns the record into a message.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include <cerrno>

#include "child/plan.hpp"
#include "child/raw_syscall.hpp"
#include "child/report.hpp"
#include "step.hpp"

namespace jail::child {

// Exit status of the child side when setup fails; the parent reads the report, not this.
inline constexpr int kSetupFailedStatus = 125;

[[gnu::always_inline]] inline void send_report(int fd, ReportKind kind, Step step, int err,
                                               int detail) {
  const Report report{kind, static_cast<std::int32_t>(step), err, detail};
  // A short or failed write leaves the parent with "the jail ended without a report", which it
  // reports as an internal error; there is nothing better to do from here. A raw write: the init
  // reports the tool's end after it let go of the caller's memory (child/caller_memory.hpp).
  while (raw::call(SYS_write, fd, &report, sizeof report) == -EINTR) {
  }
}

// A record with a file descriptor attached (SCM_RIGHTS); the buffer lives on the stack.
inline bool send_fd(int socket, ReportKind kind, int fd, std::int32_t detail) {
  Report report{kind, 0, 0, detail};
  iovec data{&report, sizeof report};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(header), &fd, sizeof fd);
  ssize_t sent;
  do {
    sent = ::sendmsg(socket, &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  return sent == static_cast<ssize_t>(sizeof report);
}

inline bool send_fd(int socket, ReportKind kind, int fd) {
  return send_fd(socket, kind, fd, fd);
}

// A setup step failed: said on the report socket, then the end of this process. The native
// init and tool report on the plan's socket; runsc's keeper and runsc's process on their own fd.
[[noreturn]] inline void fail(int report_fd, Step step, int err, int detail = -1) {
  send_report(report_fd, ReportKind::setup_failed, step, err, detail);
  ::_exit(kSetupFailedStatus);
}

[[noreturn]] inline void fail(const Plan& plan, Step step, int err, int detail = -1) {
  fail(plan.report_fd, step, err, detail);
}

}  // namespace jail::child
