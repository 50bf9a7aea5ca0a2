#include "dry_run/digest.hpp"

#include <nettle/sha2.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "jail/error.hpp"

namespace jail::dry_run {
namespace {

void update(sha256_ctx& context, const void* bytes, std::size_t size) {
  sha256_update(&context, size, static_cast<const std::uint8_t*>(bytes));
}

std::string finish(sha256_ctx& context) {
  std::uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&context, sizeof digest, digest);
  std::string hex = "sha256:";
  for (const std::uint8_t byte : digest) hex += fmt::format("{:02x}", byte);
  return hex;
}

}  // namespace

std::string sha256_of_text(std::string_view bytes) {
  sha256_ctx context;
  sha256_init(&context);
  update(context, bytes.data(), bytes.size());
  return finish(context);
}

std::string sha256_of_fd(int fd, const std::string& what) {
  sha256_ctx context;
  sha256_init(&context);
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      throw Error("dry_run", err, fmt::format("cannot read {}: {}", what, std::strerror(err)));
    }
    update(context, buffer, static_cast<std::size_t>(n));
  }
  return finish(context);
}

}  // namespace jail::dry_run
