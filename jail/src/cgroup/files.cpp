#include "files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace jail::cgroup::files {

std::string errno_text(int err) {
  const char* name = strerrorname_np(err);
  if (name == nullptr) return fmt::format("errno {} ({})", err, std::strerror(err));
  return fmt::format("{} ({})", name, std::strerror(err));
}

std::optional<std::string> read(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      ::close(fd);
      errno = saved;
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

int write(const std::string& path, std::string_view value) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  ssize_t n;
  do {
    n = ::write(fd, value.data(), value.size());
  } while (n < 0 && errno == EINTR);
  int err = 0;
  if (n < 0) {
    err = errno;
  } else if (static_cast<size_t>(n) != value.size()) {
    err = EIO;  // cgroupfs never writes short; treat it as a failure rather than guess
  }
  ::close(fd);
  return err;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::vector<std::string> subdirs(const std::string& dir, std::string_view prefix) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_type != DT_DIR) continue;  // cgroupfs (kernfs) always fills d_type
    const std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    if (name.substr(0, prefix.size()) != prefix) continue;
    out.emplace_back(name);
  }
  ::closedir(d);
  return out;
}

std::vector<pid_t> procs(const std::string& dir) {
  std::vector<pid_t> out;
  const auto text = read(dir + "/cgroup.procs");
  if (!text) return out;
  std::string_view rest = *text;
  while (!rest.empty()) {
    const size_t eol = rest.find('\n');
    const std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view{} : rest.substr(eol + 1);
    pid_t pid = 0;
    const auto [ptr, ec] = std::from_chars(line.data(), line.data() + line.size(), pid);
    if (ec == std::errc{} && pid > 0) out.push_back(pid);
  }
  return out;
}

std::string unique_name() {
  // The name must not be guessable: another user able to write a cgroup parent could otherwise
  // pre-create the directory and have the jail adopt limits (or a cgroup.procs) it controls.
  uint64_t random = 0;
  auto* bytes = reinterpret_cast<unsigned char*>(&random);
  size_t got = 0;
  while (got < sizeof random) {
    const ssize_t n = ::getrandom(bytes + got, sizeof random - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("getrandom failed: " + errno_text(errno));
    }
    got += static_cast<size_t>(n);
  }
  return fmt::format("jail-{}-{:016x}", ::getpid(), random);
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

std::optional<uint64_t> parse_u64(std::string_view s) {
  s = trim(s);
  uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<uint64_t> keyed(std::string_view text, std::string_view key) {
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    const size_t sp = line.find(' ');
    if (sp == std::string_view::npos || line.substr(0, sp) != key) continue;
    return parse_u64(line.substr(sp + 1));
  }
  return std::nullopt;
}

std::optional<uint64_t> number(std::string_view text) {
  return parse_u64(text);
}

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t')) ++i;
    size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\n' && text[j] != '\t') ++j;
    if (j > i) out.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace jail::cgroup::files
