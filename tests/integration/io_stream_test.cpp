// Streams through a jail: a pipe given to jail reaches the tool as that very pipe, and a 1 GiB
// stream comes out byte-exact, both handed over directly and through the --max-output relay.
// The data is generated on the fly by a PRNG and checked against the same sequence as it
// arrives, so nothing of that size is ever stored.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "io_spawn.hpp"
#include "run_jail.hpp"

namespace jail_test {
namespace {

using Clock = std::chrono::steady_clock;
using io::Exit;
using io::Pipe;
using io::ScratchFile;
using io::Spawned;

constexpr std::uint64_t kStreamBytes = 1ull << 30;
constexpr std::size_t kBlock = 1 << 20;

// splitmix64 of the word index: any block of the stream can be produced on its own.
std::uint64_t stream_word(std::uint64_t index) {
  std::uint64_t z = index * 0x9e3779b97f4a7c15ull + 0x5eed;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Block `block` (kBlock bytes) of the stream.
void fill_block(std::uint64_t block, char* out) {
  const std::uint64_t first = block * (kBlock / 8);
  for (std::size_t i = 0; i < kBlock / 8; ++i) {
    const std::uint64_t w = stream_word(first + i);
    std::memcpy(out + i * 8, &w, 8);
  }
}

struct StreamOutcome {
  std::uint64_t received = 0;
  std::optional<std::uint64_t> first_mismatch;  // offset of the first wrong byte
  bool writer_complete = false;
  bool timed_out = false;
  std::optional<Exit> exit;
  std::string err;
  double seconds = 0;
};

// Sends kStreamBytes of the PRNG stream through jail `args` and checks what comes out.
StreamOutcome stream_through(const std::vector<std::string>& args, Caller caller,
                             const std::string& cwd, std::chrono::seconds timeout) {
  ::signal(SIGPIPE, SIG_IGN);  // a jail that dies must not take the test with it
  Pipe in, out;
  TempDir scratch;
  ScratchFile err(scratch / "stderr");
  StreamOutcome result;
  const auto start = Clock::now();
  {
    Spawned jail(args, caller, cwd, {.in = in.read_end(), .out = out.write_end(), .err = err.fd()});
    in.close_read();
    out.close_write();
    std::atomic<bool> writer_complete{false};
    std::atomic<bool> stop{false};
    // The writer owns the write end; it gives up when told to, even on a jail that never reads.
    std::thread writer([&] {
      const int fd = in.write_end();
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
      std::vector<char> chunk(kBlock);
      for (std::uint64_t b = 0; b < kStreamBytes / kBlock && !stop; ++b) {
        fill_block(b, chunk.data());
        std::size_t done = 0;
        while (done < kBlock && !stop) {
          const ssize_t n = ::write(fd, chunk.data() + done, kBlock - done);
          if (n > 0) {
            done += static_cast<std::size_t>(n);
          } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            pollfd p{fd, POLLOUT, 0};
            ::poll(&p, 1, 200);
          } else {
            stop = true;  // EPIPE: nobody reads any more
          }
        }
        if (b + 1 == kStreamBytes / kBlock && done == kBlock) writer_complete = true;
      }
      in.close_write();
    });

    const auto deadline = start + timeout;
    std::vector<char> got(kBlock);
    std::vector<char> want(kBlock);
    std::size_t filled = 0;
    std::uint64_t block = 0;
    auto check = [&](std::size_t size) {
      fill_block(block, want.data());
      if (!result.first_mismatch && std::memcmp(got.data(), want.data(), size) != 0) {
        const auto at =
            std::mismatch(got.begin(), got.begin() + static_cast<long>(size), want.begin());
        result.first_mismatch = block * kBlock + static_cast<std::uint64_t>(at.first - got.begin());
      }
      ++block;
    };
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        result.timed_out = true;
        break;
      }
      pollfd p{out.read_end(), POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000))) <= 0) continue;
      const ssize_t n = ::read(out.read_end(), got.data() + filled, kBlock - filled);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      filled += static_cast<std::size_t>(n);
      result.received += static_cast<std::uint64_t>(n);
      if (filled == kBlock) {
        check(kBlock);
        filled = 0;
      }
    }
    if (filled > 0) check(filled);
    if (result.timed_out) jail.kill(SIGKILL);
    out.close_read();
    result.exit = jail.wait(result.timed_out ? std::chrono::milliseconds(5000) : 30'000ms);
    stop = true;
    writer.join();
    result.writer_complete = writer_complete;
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.err = err.contents();
  return result;
}

std::string describe(const StreamOutcome& r) {
  std::string s = "received " + std::to_string(r.received) + " of " + std::to_string(kStreamBytes) +
                  " bytes in " + std::to_string(r.seconds) + " s; writer " +
                  (r.writer_complete ? "complete" : "incomplete") +
                  (r.timed_out ? "; TIMED OUT" : "");
  if (r.first_mismatch) s += "; first wrong byte at offset " + std::to_string(*r.first_mismatch);
  if (r.exit) {
    s += "; jail " + r.exit->text();
  } else {
    s += "; jail did not end";
  }
  return s + "\n--- jail's stderr ---\n" + r.err.substr(0, 4000);
}

class IoStream : public CallerTest {};

TEST_P(IoStream, GibibyteThroughCatIsByteExact) {
  StreamOutcome r = stream_through({"-q", "--", "cat"}, caller(), cwd_.path(), 100s);
  EXPECT_FALSE(r.timed_out) << describe(r);
  EXPECT_TRUE(r.writer_complete) << describe(r);
  EXPECT_EQ(r.received, kStreamBytes) << describe(r);
  EXPECT_FALSE(r.first_mismatch) << describe(r);
  ASSERT_TRUE(r.exit) << describe(r);
  EXPECT_TRUE(r.exit->exited_with(0)) << describe(r);
  std::printf("[ stream   ] 1 GiB through jail -- cat (%s): %.2f s, %.0f MB/s\n",
              caller() == Caller::root ? "root" : "unprivileged", r.seconds,
              static_cast<double>(kStreamBytes) / 1e6 / r.seconds);
}

TEST_P(IoStream, GibibyteThroughTheOutputRelayIsByteExact) {
  const std::string status_path = cwd_ / "status.json";
  StreamOutcome r =
      stream_through({"-q", "--max-output", "2G", "--status-file", status_path, "--", "cat"},
                     caller(), cwd_.path(), 100s);
  EXPECT_FALSE(r.timed_out) << describe(r);
  EXPECT_TRUE(r.writer_complete) << describe(r);
  EXPECT_EQ(r.received, kStreamBytes) << describe(r);
  EXPECT_FALSE(r.first_mismatch) << describe(r);
  ASSERT_TRUE(r.exit) << describe(r);
  EXPECT_TRUE(r.exit->exited_with(0)) << describe(r);
  const auto text = read_file(status_path);
  ASSERT_TRUE(text) << "no status file\n" << describe(r);
  const auto status = nlohmann::json::parse(*text, nullptr, false);
  ASSERT_TRUE(status.is_object()) << *text;
  EXPECT_EQ(status.value("outcome", ""), "exited") << *text;
  EXPECT_EQ(status.value("output_truncated", true), false) << *text;
  std::printf("[ stream   ] 1 GiB through jail --max-output 2G -- cat (%s): %.2f s, %.0f MB/s\n",
              caller() == Caller::root ? "root" : "unprivileged", r.seconds,
              static_cast<double>(kStreamBytes) / 1e6 / r.seconds);
}

// Without a cap or a terminal, the caller's pipes are the tool's own stdin/stdout: no copy.
TEST_P(IoStream, PipesAreHandedToTheToolDirectly) {
  Pipe in, out;
  ScratchFile err(cwd_ / "stderr");
  std::string got;
  std::optional<Exit> exit;
  {
    Spawned jail({"-q", "--", "readlink", "/proc/self/fd/0", "/proc/self/fd/1"}, caller(),
                 cwd_.path(), {.in = in.read_end(), .out = out.write_end(), .err = err.fd()});
    in.close_read();
    out.close_write();
    EXPECT_TRUE(io::read_to_end(out.read_end(), got, 20s));
    exit = jail.wait(20s);
  }
  struct stat in_st {
  }, out_st{};
  ASSERT_EQ(::fstat(in.write_end(), &in_st), 0);
  ASSERT_EQ(::fstat(out.read_end(), &out_st), 0);
  const std::string expected =
      "pipe:[" + std::to_string(in_st.st_ino) + "]\npipe:[" + std::to_string(out_st.st_ino) + "]\n";
  ASSERT_TRUE(exit) << got << err.contents();
  EXPECT_TRUE(exit->exited_with(0)) << exit->text() << "\n" << err.contents();
  EXPECT_EQ(got, expected) << "the tool's stdin/stdout are not the caller's pipes";
}

JAIL_INSTANTIATE_FOR_CALLERS(IoStream);

}  // namespace
}  // namespace jail_test
