#include "policy/text_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace jail::policy {

std::optional<std::string> read_text_file(const std::string& path, std::string& why) {
  // Non-blocking: a FIFO is refused below instead of waiting for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    why = std::strerror(errno);
    return std::nullopt;
  }
  struct stat info {};
  std::optional<std::string> text;
  if (::fstat(fd, &info) != 0) {
    why = std::strerror(errno);
  } else if (S_ISDIR(info.st_mode)) {
    why = "it is a directory; give a file";
  } else if (!S_ISREG(info.st_mode)) {
    why = "it is not a regular file (a FIFO, socket or device); give a file";
  } else if (static_cast<std::size_t>(info.st_size) > kMaxPolicyFileBytes) {
    why = "it is larger than 16 MiB, far more than any policy or profile; is it the right file?";
  } else {
    text.emplace();
    char buffer[65536];
    for (;;) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        why = std::strerror(errno);
        text.reset();
        break;
      }
      if (n == 0) break;
      text->append(buffer, static_cast<std::size_t>(n));
      if (text->size() > kMaxPolicyFileBytes) {  // grew while read
        why =
            "it is larger than 16 MiB, far more than any policy or profile; is it the right file?";
        text.reset();
        break;
      }
    }
  }
  ::close(fd);
  return text;
}

}  // namespace jail::policy
