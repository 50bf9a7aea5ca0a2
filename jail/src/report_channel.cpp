#include "report_channel.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace jail {

void ReportChannel::drain() {
  while (open_) {
    child::Report report{};
    iovec data{&report, sizeof report};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(socket_.get(), &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return;  // EAGAIN: nothing more for now
    if (n == 0) {
      open_ = false;  // every copy of the child's end is closed
      return;
    }
    for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
         header = CMSG_NXTHDR(&message, header)) {
      if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(header), sizeof fd);
        fds_.push_back({report.kind, UniqueFd(fd), report.detail});
      }
    }
    if (n == static_cast<ssize_t>(sizeof report)) reports_.push_back(report);
  }
}

UniqueFd ReportChannel::take(child::ReportKind kind) {
  for (auto it = fds_.begin(); it != fds_.end(); ++it) {
    if (it->kind == kind) {
      UniqueFd fd = std::move(it->fd);
      fds_.erase(it);
      return fd;
    }
  }
  return {};
}

std::vector<std::pair<int, UniqueFd>> ReportChannel::take_all(child::ReportKind kind) {
  std::vector<std::pair<int, UniqueFd>> taken;
  for (auto it = fds_.begin(); it != fds_.end();) {
    if (it->kind == kind) {
      taken.emplace_back(it->detail, std::move(it->fd));
      it = fds_.erase(it);
    } else {
      ++it;
    }
  }
  return taken;
}

}  // namespace jail
