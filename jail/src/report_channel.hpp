// Parent side of the report socket: the child's records, and the descriptors some of them carry
// (the pty master, the seccomp listener).
#pragma once

#include <utility>
#include <vector>

#include "child/report.hpp"
#include "unique_fd.hpp"

namespace jail {

class ReportChannel {
 public:
  ReportChannel() = default;
  explicit ReportChannel(UniqueFd socket) : socket_(std::move(socket)) {}

  [[nodiscard]] int fd() const { return open_ ? socket_.get() : -1; }
  [[nodiscard]] bool open() const { return open_; }

  // Reads every record available now (the socket is non-blocking).
  void drain();

  [[nodiscard]] const std::vector<child::Report>& reports() const { return reports_; }
  // Descriptors received since the last call, by kind; ownership passes to the caller.
  [[nodiscard]] UniqueFd take(child::ReportKind kind);
  // Every descriptor of `kind` received so far, with its report's detail.
  [[nodiscard]] std::vector<std::pair<int, UniqueFd>> take_all(child::ReportKind kind);

 private:
  struct Received {
    child::ReportKind kind;
    UniqueFd fd;
    int detail = -1;
  };
  UniqueFd socket_;
  bool open_ = true;
  std::vector<child::Report> reports_;
  std::vector<Received> fds_;
};

}  // namespace jail
