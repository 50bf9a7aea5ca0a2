#include "dry_run/digest.hpp"

#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "jail/error.hpp"

namespace jail::dry_run {
namespace {

struct ContextFree {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};
using Context = std::unique_ptr<EVP_MD_CTX, ContextFree>;

Context new_context() {
  Context context(EVP_MD_CTX_new());
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) {
    throw Error("digest", ENOMEM, "cannot start a SHA-256 digest (OpenSSL)");
  }
  return context;
}

std::string finish(EVP_MD_CTX* context) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned length = 0;
  EVP_DigestFinal_ex(context, digest, &length);
  std::string hex = "sha256:";
  for (unsigned i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

}  // namespace

std::string sha256_of_text(std::string_view bytes) {
  Context context = new_context();
  EVP_DigestUpdate(context.get(), bytes.data(), bytes.size());
  return finish(context.get());
}

std::string sha256_of_fd(int fd, const std::string& what) {
  Context context = new_context();
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      throw Error("dry_run", err, fmt::format("cannot read {}: {}", what, std::strerror(err)));
    }
    EVP_DigestUpdate(context.get(), buffer, static_cast<std::size_t>(n));
  }
  return finish(context.get());
}

}  // namespace jail::dry_run
